package clamp

import "testing"

func TestClamp(t *testing.T) {
	for _, tc := range testCases {
		t.Run(tc.description, func(t *testing.T) {
			if got := Clamp(tc.x, tc.lo, tc.hi); got != tc.expected {
				t.Fatalf("Clamp(%d, %d, %d) = %d, want %d", tc.x, tc.lo, tc.hi, got, tc.expected)
			}
		})
	}
}

func TestClampEdges(t *testing.T) {
	if got := Clamp(9, 0, 9); got != 9 {
		t.Errorf("Clamp(9, 0, 9) = %d, want 9", got)
	}
}
