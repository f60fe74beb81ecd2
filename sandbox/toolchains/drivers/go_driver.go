// The harness's driver (a file of its own in package main): reads the job's token and
// one JSON argument list a line on descriptor 3, calls the function under test once per
// line, and writes "<token> <index> <result>" on descriptor 4 in the canonical form
// (sandbox/worker/values.py), then "<token> end". It holds no expected value.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

func main() { __harnessRun(__ENTRY__) }

func __harnessRun(function interface{}) {
	data, _ := io.ReadAll(os.NewFile(3, "calls"))
	results := os.NewFile(4, "results")
	lines := strings.Split(string(data), "\n")
	token := lines[0]
	value := reflect.ValueOf(function)
	kind := value.Type()
	index := 0
	for _, line := range lines[1:] {
		if line == "" {
			continue
		}
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			fmt.Fprintf(os.Stderr, "harness driver: call %d is not a list of arguments\n", index+1)
			os.Exit(3)
		}
		if len(raw) != kind.NumIn() && !kind.IsVariadic() {
			fmt.Fprintf(os.Stderr, "harness driver: call %d: %d arguments given, the function takes %d\n", index+1, len(raw), kind.NumIn())
			os.Exit(3)
		}
		args := make([]reflect.Value, len(raw))
		for k := range raw {
			var target reflect.Type
			if kind.IsVariadic() && k >= kind.NumIn()-1 {
				target = kind.In(kind.NumIn() - 1).Elem()
			} else {
				target = kind.In(k)
			}
			place := reflect.New(target)
			if err := json.Unmarshal(raw[k], place.Interface()); err != nil {
				fmt.Fprintf(os.Stderr, "harness driver: call %d: argument %d: %v\n", index+1, k+1, err)
				os.Exit(3)
			}
			args[k] = place.Elem()
		}
		out := value.Call(args)
		var text string
		switch len(out) {
		case 0:
			text = "null"
		case 1:
			text = __harnessCanon(out[0])
		default:
			parts := make([]string, len(out))
			for k, v := range out {
				parts[k] = __harnessCanon(v)
			}
			text = "[" + strings.Join(parts, ",") + "]"
		}
		fmt.Fprintf(results, "%s %d %s\n", token, index, text)
		index++
	}
	fmt.Fprintf(results, "%s end\n", token)
}

func __harnessFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

func __harnessString(s string) string {
	var b strings.Builder
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(s)
	return strings.TrimRight(b.String(), "\n")
}

func __harnessCanon(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32:
		return __harnessFloat(v.Float(), 32)
	case reflect.Float64:
		return __harnessFloat(v.Float(), 64)
	case reflect.String:
		return __harnessString(v.String())
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for k := 0; k < v.Len(); k++ {
			parts[k] = __harnessCanon(v.Index(k))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case reflect.Map:
		pairs := make([]string, 0, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			key := __harnessCanon(iter.Key())
			if !strings.HasPrefix(key, "\"") {
				key = __harnessString(key)
			}
			pairs = append(pairs, key+":"+__harnessCanon(iter.Value()))
		}
		sort.Strings(pairs)
		return "{" + strings.Join(pairs, ",") + "}"
	case reflect.Ptr, reflect.Interface:
		if v.IsNil() {
			return "null"
		}
		return __harnessCanon(v.Elem())
	case reflect.Struct:
		parts := []string{}
		for k := 0; k < v.NumField(); k++ {
			if v.Type().Field(k).IsExported() {
				parts = append(parts, __harnessString(v.Type().Field(k).Name)+":"+__harnessCanon(v.Field(k)))
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	case reflect.Invalid:
		return "null"
	}
	return __harnessString(fmt.Sprint(v.Interface()))
}
