package runlength

func Encode(text string) string {
	panic("Please implement the Encode function")
}
