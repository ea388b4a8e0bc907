package agentflow

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// program is a generated program of at least lines lines: one workflow
// whose pipeline has stages of every statement and an agent call each,
// every stage after the one before it. It checks clean.
func program(lines int) []byte {
	var b strings.Builder
	b.WriteString("workflow big(input: In, context: any) -> Result[] {\n  use agent \"acme/worker\" as worker\n  limits { concurrency: 4, agent_runs: 100, duration: 2h }\n  type In { items: Item[], retry?: bool }\n  type Item { name: text, path: path }\n  type Result { ok: bool, note?: text }\n  pipeline {\n")
	n := 0
	for i := 0; strings.Count(b.String(), "\n") < lines-4; i++ {
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf(" after s%d", i-1)
		}
		fmt.Fprintf(&b, `    // stage %[1]d
    stage s%[1]d%[2]s -> Result[] {
      let items = input.items[*].name ?? []
      require not items.empty and unique(items) else fail "stage %[1]d: no items"
      emit progress { stage: %[1]d, count: items.count }
      let r = parallel map input.items as item limit 4 {
        agent(worker) {
          task """
            Work on the item.
          """
          input { item, n: %[1]d }
          tools [read_file, write_file]
          expect Result
          timeout 30s
          retry { attempts: 2, on: [timeout, transient] }
        }
      }
      if r.count > 0 or (input.retry ?? false) {
        return r
      } else {
        emit progress { stage: %[1]d, empty: true }
      }
      return []
    }
`, i, dep)
		n = i
	}
	fmt.Fprintf(&b, "    return s%d\n  }\n}\n", n)
	return []byte(b.String())
}

// BenchmarkParse: a generated 10,000-line program (docs/benchmarks.md).
func BenchmarkParse(b *testing.B) {
	src := program(10_000)
	if _, diags := Parse(src); len(diags) > 0 {
		b.Fatal(diags)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(src)
	}
	b.ReportMetric(float64(strings.Count(string(src), "\n")), "lines")
}

// BenchmarkCheck: the same program parsed and checked, as agent check
// does; it stays under a second (docs/benchmarks.md).
func BenchmarkCheck(b *testing.B) {
	src := program(10_000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		f, diags := Parse(src)
		if diags = append(diags, CheckFile(f)...); len(diags) > 0 {
			b.Fatal(diags)
		}
	}
}

// BenchmarkFormat: the same program, formatted.
func BenchmarkFormat(b *testing.B) {
	src := program(10_000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := Format(src); len(diags) > 0 {
			b.Fatal(diags)
		}
	}
}

// TestProgram: the benchmark's program is clean and of the size it says.
func TestProgram(t *testing.T) {
	t.Parallel()
	src := program(10_000)
	if n := strings.Count(string(src), "\n"); n < 10_000 || n > 10_100 {
		t.Errorf("program(10000) has %d lines", n)
	}
	out, diags := Format(src)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	f, _ := Parse(src)
	start := time.Now()
	if diags := CheckFile(f); len(diags) > 0 {
		t.Fatalf("the benchmark's program does not check clean: %v", diags[0])
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("CheckFile of program(10000) took %s", d)
	}
	if string(out) != string(src) {
		t.Errorf("the benchmark's program is not formatted")
	}
}
