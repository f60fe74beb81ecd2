package clamp

var testCases = []struct {
	description string
	x, lo, hi   int
	expected    int
}{
	{description: "inside", x: 5, lo: 1, hi: 9, expected: 5},
	{description: "below", x: -3, lo: 0, hi: 9, expected: 0},
	{description: "above", x: 42, lo: 0, hi: 9, expected: 9},
}
