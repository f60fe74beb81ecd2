package runlength

import "testing"

func TestEncodeEmpty(t *testing.T) {
	if got := Encode(""); got != "" {
		t.Fatalf("Encode(%q) = %q, want %q", "", got, "")
	}
}

func TestEncodeRuns(t *testing.T) {
	if got := Encode("aaab"); got != "3a1b" {
		t.Fatalf("Encode(%q) = %q, want %q", "aaab", got, "3a1b")
	}
}

func BenchmarkEncode(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Encode("aaabbbccc")
	}
}
