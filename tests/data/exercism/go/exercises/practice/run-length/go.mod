module runlength

go 1.18
