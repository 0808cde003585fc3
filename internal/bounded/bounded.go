// Package bounded reads configuration inputs (the incident file, its
// capacity timeline, the tenant directory, mapping files) within fixed
// bounds, so a small or endless input (a YAML alias bomb, `timeline:
// /dev/zero`) fails fast with an error instead of exhausting memory.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Size limits of the files read whole. Each is far above a real file: an
// incident file is a few KB, a timeline a few thousand rows (16 MiB holds
// 250,000), a directory of
// a million tenants about 100 MB.
const (
	MaxYAMLBytes      = 4 << 20
	MaxTimelineBytes  = 16 << 20
	MaxDirectoryBytes = 256 << 20
)

// YAML bounds: an incident file nests four levels and holds a few hundred
// values; aliases may repeat wording, not multiply it.
const (
	MaxYAMLDepth  = 64
	MaxYAMLValues = 100_000
)

// ErrTooLarge is wrapped by ReadFile when a file is over its limit.
var ErrTooLarge = errors.New("over the size limit")

// ReadFile reads path whole, refusing it (without reading further) when it
// holds more than limit bytes; a device or FIFO that never ends stops there.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w of %d bytes", path, ErrTooLarge, limit)
	}
	return data, nil
}

// CheckYAML refuses YAML that nests deeper than MaxYAMLDepth or whose
// aliases expand to more than MaxYAMLValues values, before any decoder
// expands it. The nesting is first checked on the bytes: the parser's
// time grows with the square of the depth (100,000 '[' took 32 s).
func CheckYAML(data []byte) error {
	if d := textDepth(data); d > MaxYAMLDepth {
		return fmt.Errorf("yaml: nested more than %d levels deep", MaxYAMLDepth)
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil // the decoder reports syntax errors with their line
	}
	m := measurer{anchors: map[string]extent{}, memo: map[ast.Node]extent{}}
	for _, doc := range f.Docs {
		e := m.measure(doc)
		if e.depth > MaxYAMLDepth {
			return fmt.Errorf("yaml: nested more than %d levels deep (aliases included)", MaxYAMLDepth)
		}
		if e.values > MaxYAMLValues {
			return fmt.Errorf("yaml: aliases expand to more than %d values (an alias bomb?)", MaxYAMLValues)
		}
	}
	return nil
}

// textDepth is an upper bound of the nesting on the bytes: flow brackets
// outside quotes and comments, plus block indentation levels.
func textDepth(data []byte) int {
	maxDepth, flow, dashes := 0, 0, 0
	var indents []int
	lineStart, inSingle, inDouble := true, false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if lineStart {
			dashes = 0
		}
		if lineStart && flow == 0 && !inSingle && !inDouble {
			j := i
			for j < len(data) && data[j] == ' ' {
				j++
			}
			if j < len(data) && data[j] != '\n' && data[j] != '#' {
				for len(indents) > 0 && indents[len(indents)-1] >= j-i {
					indents = indents[:len(indents)-1]
				}
				indents = append(indents, j-i)
			}
		}
		lineStart = false
		switch {
		case inDouble:
			if c == '\\' {
				i++
			} else if c == '"' {
				inDouble = false
			}
		case inSingle:
			if c == '\'' {
				inSingle = false
			}
		case c == '"':
			inDouble = true
		case c == '\'' && (i == 0 || data[i-1] == ' ' || data[i-1] == '[' || data[i-1] == '{' || data[i-1] == ','):
			inSingle = true
		case c == '#' && (i == 0 || data[i-1] == ' ' || data[i-1] == '\n'):
			for i < len(data) && data[i] != '\n' {
				i++
			}
			lineStart = true
		case c == '[' || c == '{':
			flow++
		case c == ']' || c == '}':
			flow = max(flow-1, 0)
		case c == '-' && i+1 < len(data) && data[i+1] == ' ':
			// "- - - x" nests a sequence per dash on one line.
			if i == 0 || data[i-1] == ' ' || data[i-1] == '\n' {
				dashes++
			}
		case c == '\n':
			lineStart = true
		}
		maxDepth = max(maxDepth, flow+len(indents)+dashes)
	}
	return maxDepth
}

// extent is what a node expands to: its values and its depth.
type extent struct{ values, depth int64 }

type measurer struct {
	anchors map[string]extent
	memo    map[ast.Node]extent
}

// measure walks a node in document order; an alias counts as what its
// anchor expands to, so a bomb is measured without being expanded.
func (m *measurer) measure(n ast.Node) extent {
	if n == nil {
		return extent{}
	}
	if e, ok := m.memo[n]; ok {
		return e
	}
	var e extent
	switch x := n.(type) {
	case *ast.AliasNode:
		if x.Value != nil {
			e = m.anchors[x.Value.GetToken().Value]
		}
	case *ast.AnchorNode:
		e = m.measure(x.Value)
		if x.Name != nil {
			m.anchors[x.Name.GetToken().Value] = e
		}
	default:
		e.values = 1
		for _, k := range children(n) {
			c := m.measure(k)
			e.values = min(e.values+c.values, 1<<40)
			e.depth = max(e.depth, c.depth)
		}
		e.depth++
	}
	m.memo[n] = e
	return e
}

// children lists a node's direct children, in document order.
func children(n ast.Node) []ast.Node {
	c := &collector{root: n}
	ast.Walk(c, n)
	return c.kids
}

type collector struct {
	root ast.Node
	kids []ast.Node
}

func (c *collector) Visit(n ast.Node) ast.Visitor {
	if n == c.root {
		return c
	}
	c.kids = append(c.kids, n)
	return nil
}
