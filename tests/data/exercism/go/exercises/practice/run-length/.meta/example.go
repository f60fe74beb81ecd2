package runlength

import (
	"strconv"
	"strings"
)

func Encode(text string) string {
	var out strings.Builder
	runes := []rune(text)
	for i := 0; i < len(runes); {
		j := i
		for j < len(runes) && runes[j] == runes[i] {
			j++
		}
		out.WriteString(strconv.Itoa(j - i))
		out.WriteRune(runes[i])
		i = j
	}
	return out.String()
}
