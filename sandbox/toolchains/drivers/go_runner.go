// The harness's test runner for an exercise's own Go tests (the generated main of a
// test binary, as `go test` would write one): it reads the job's token and one JSON list
// `["TestName"]` on descriptor 3, runs exactly that test function through the testing
// package's own main (testing.MainStart, with -test.run naming it alone), and writes "<token> 0 true" on descriptor 4 when it
// passed, else "<token> 0 <the test's output, as a JSON string>", then "<token> end".
// The verdict is taken in the program's process: sandbox/README.md, "Test runners".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"regexp"
	"testing"
	"testing/internal/testdeps"
)

var harnessTests = []testing.InternalTest{
__TESTS__}

func main() {
	testing.Init()
	flag.Parse()
	calls := os.NewFile(3, "calls")
	data, _ := io.ReadAll(calls)
	calls.Close()
	lines := strings.SplitN(string(data), "\n", 3)
	token := lines[0]
	var names []string
	if len(lines) > 1 {
		_ = json.Unmarshal([]byte(lines[1]), &names)
	}
	var chosen []testing.InternalTest
	for _, t := range harnessTests {
		if len(names) == 1 && t.Name == names[0] {
			chosen = append(chosen, t)
		}
	}
	quote := func(text string) string {
		encoded, _ := json.Marshal(text)
		return string(encoded)
	}
	result := quote(fmt.Sprintf("no test named %q in the test files", strings.Join(names, "")))
	if len(chosen) == 1 {
		// The test's own output (t.Error's messages) is what failed: kept in a file while
		// it runs (a job makes no pipe), then printed and sent as the result.
		capture, err := os.CreateTemp("", "harness-test-output")
		if err != nil {
			result = quote("the harness's runner could not keep the test's output: " + err.Error())
		} else {
			saved := os.Stdout
			os.Stdout = capture
			flag.Set("test.run", "^"+regexp.QuoteMeta(chosen[0].Name)+"$")
			flag.Set("test.count", "1")
			code := testing.MainStart(testdeps.TestDeps{}, chosen, nil, nil, nil).Run()
			os.Stdout = saved
			ok := code == 0
			capture.Seek(0, io.SeekStart)
			printed, _ := io.ReadAll(io.LimitReader(capture, 64*1024))
			capture.Close()
			os.Stdout.Write(printed)
			if ok {
				result = "true"
			} else {
				result = quote(strings.TrimSpace(string(printed)))
			}
		}
	}
	out := os.NewFile(4, "results")
	fmt.Fprintf(out, "%s 0 %s\n%s end\n", token, result, token)
	out.Close()
}
