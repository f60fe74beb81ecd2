module clamp

go 1.18
