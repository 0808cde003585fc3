package notify

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"text/template/parse"
	"time"

	"github.com/leakmap/leakmap/internal/catalog"
)

// A compiled template is the parse tree of one of templates/notify's
// templates turned, once, into a list of literal text, catalogue calls and
// field reads whose struct field indices are resolved against the view's
// type at parse time. Executing it writes the same bytes as text/template
// (TestCompiledRenderMatchesTextTemplate) without text/template's
// reflection per node (field lookup by name, reflect.Value.Call of the
// catalogue): it was most of the rendering's CPU. The words stay in the
// catalogue and the markup in templates/; a construct the compiler does not
// know is refused when the templates are parsed, never run differently.

// cnode writes its part of the output for dot.
type cnode func(w *bytes.Buffer, dot reflect.Value) error

// cexpr is a compiled expression of static type typ. str is set for a
// string result made by a call (no reflect.Value to box it in), cond for
// and/not/eq, which only decide an if; rv otherwise.
type cexpr struct {
	typ  reflect.Type
	rv   func(dot reflect.Value) (reflect.Value, error)
	str  func(dot reflect.Value) (string, error)
	cond func(dot reflect.Value) (bool, error)
	// konst: a string constant's value, so that it is put in an interface
	// once, not at every call.
	konst *string
}

var (
	stringType    = reflect.TypeFor[string]()
	boolType      = reflect.TypeFor[bool]()
	stringsType   = reflect.TypeFor[[]string]()
	intType       = reflect.TypeFor[int]()
	int64Type     = reflect.TypeFor[int64]()
	int32Type     = reflect.TypeFor[int32]()
	errNotCompile = fmt.Errorf("not supported by the notice template compiler")
)

// compiler compiles one template set (one kind, one language).
type compiler struct {
	name string // file, for messages
	tree *parse.Tree
	c    *catalog.Catalog
}

func (cp *compiler) errorf(n parse.Node, format string, args ...any) error {
	loc, _ := cp.tree.ErrorContext(n)
	return fmt.Errorf("%s: %s: %w", loc, fmt.Sprintf(format, args...), errNotCompile)
}

// compileTemplate compiles tree, whose dot is of type dot.
func compileTemplate(name string, tree *parse.Tree, c *catalog.Catalog, dot reflect.Type) (cnode, error) {
	cp := &compiler{name: name, tree: tree, c: c}
	return cp.list(tree.Root, dot)
}

func (cp *compiler) list(l *parse.ListNode, dot reflect.Type) (cnode, error) {
	if l == nil {
		return func(*bytes.Buffer, reflect.Value) error { return nil }, nil
	}
	var nodes []cnode
	for _, n := range l.Nodes {
		c, err := cp.node(n, dot)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, c)
	}
	return func(w *bytes.Buffer, d reflect.Value) error {
		for _, n := range nodes {
			if err := n(w, d); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

func (cp *compiler) node(n parse.Node, dot reflect.Type) (cnode, error) {
	switch n := n.(type) {
	case *parse.TextNode:
		text := bytes.Clone(n.Text)
		return func(w *bytes.Buffer, _ reflect.Value) error { w.Write(text); return nil }, nil
	case *parse.ActionNode:
		e, err := cp.pipe(n.Pipe, dot)
		if err != nil {
			return nil, err
		}
		s, err := cp.asString(n, e)
		if err != nil {
			return nil, err
		}
		return func(w *bytes.Buffer, d reflect.Value) error {
			v, err := s(d)
			w.WriteString(v)
			return err
		}, nil
	case *parse.IfNode:
		e, err := cp.pipe(n.Pipe, dot)
		if err != nil {
			return nil, err
		}
		cond := cp.asCond(e)
		then, err := cp.list(n.List, dot)
		if err != nil {
			return nil, err
		}
		els, err := cp.list(n.ElseList, dot)
		if err != nil {
			return nil, err
		}
		return func(w *bytes.Buffer, d reflect.Value) error {
			ok, err := cond(d)
			if err != nil {
				return err
			}
			if ok {
				return then(w, d)
			}
			return els(w, d)
		}, nil
	case *parse.RangeNode:
		if n.ElseList != nil {
			return nil, cp.errorf(n, "range with else")
		}
		e, err := cp.pipe(n.Pipe, dot)
		if err != nil {
			return nil, err
		}
		if k := e.typ.Kind(); k != reflect.Slice && k != reflect.Array {
			return nil, cp.errorf(n, "range over %s, not a slice", e.typ)
		}
		get := cp.asValue(e)
		body, err := cp.list(n.List, e.typ.Elem())
		if err != nil {
			return nil, err
		}
		return func(w *bytes.Buffer, d reflect.Value) error {
			v, err := get(d)
			if err != nil {
				return err
			}
			for i := 0; i < v.Len(); i++ {
				if err := body(w, v.Index(i)); err != nil {
					return err
				}
			}
			return nil
		}, nil
	}
	return nil, cp.errorf(n, "%T %s", n, n)
}

// pipe compiles a pipeline of one command and no variables.
func (cp *compiler) pipe(p *parse.PipeNode, dot reflect.Type) (cexpr, error) {
	if p == nil || len(p.Decl) > 0 || p.IsAssign || len(p.Cmds) != 1 {
		return cexpr{}, cp.errorf(p, "pipeline %s", p)
	}
	return cp.command(p.Cmds[0], dot)
}

func (cp *compiler) command(c *parse.CommandNode, dot reflect.Type) (cexpr, error) {
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		return cp.call(c, id.Ident, c.Args[1:], dot)
	}
	if len(c.Args) != 1 {
		return cexpr{}, cp.errorf(c, "command %s", c)
	}
	return cp.arg(c.Args[0], dot)
}

func (cp *compiler) arg(n parse.Node, dot reflect.Type) (cexpr, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return cexpr{typ: dot, rv: func(d reflect.Value) (reflect.Value, error) { return d, nil }}, nil
	case *parse.FieldNode:
		return cp.field(n, n.Ident, dot)
	case *parse.StringNode:
		s := n.Text
		return cexpr{typ: stringType, str: func(reflect.Value) (string, error) { return s, nil }, konst: &s}, nil
	case *parse.PipeNode:
		return cp.pipe(n, dot)
	}
	return cexpr{}, cp.errorf(n, "argument %s", n)
}

// field resolves .A.B... on the static type dot: struct fields only (no
// methods, maps or interfaces, whose targets are known only at run time),
// through pointers, which must not be nil (as text/template refuses).
func (cp *compiler) field(n parse.Node, path []string, dot reflect.Type) (cexpr, error) {
	typ := dot
	type step struct {
		ptr   bool
		index int
		name  string
	}
	var steps []step
	for _, name := range path {
		ptr := false
		if typ.Kind() == reflect.Pointer {
			ptr, typ = true, typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			return cexpr{}, cp.errorf(n, "field %s of %s, not a struct", name, typ)
		}
		if _, ok := typ.MethodByName(name); ok {
			return cexpr{}, cp.errorf(n, "method %s of %s", name, typ)
		}
		if _, ok := reflect.PointerTo(typ).MethodByName(name); ok {
			return cexpr{}, cp.errorf(n, "method %s of %s", name, typ)
		}
		f, ok := typ.FieldByName(name)
		if !ok || !f.IsExported() || len(f.Index) != 1 {
			return cexpr{}, cp.errorf(n, "no exported field %s in %s", name, typ)
		}
		if f.Type.Kind() == reflect.Interface || f.Type.Kind() == reflect.Map {
			return cexpr{}, cp.errorf(n, "field %s of %s is a %s", name, typ, f.Type.Kind())
		}
		steps = append(steps, step{ptr, f.Index[0], typ.String() + "." + name})
		typ = f.Type
	}
	return cexpr{typ: typ, rv: func(d reflect.Value) (reflect.Value, error) {
		for _, s := range steps {
			if s.ptr {
				if d.IsNil() {
					return reflect.Value{}, fmt.Errorf("nil pointer evaluating %s", s.name)
				}
				d = d.Elem()
			}
			d = d.Field(s.index)
		}
		return d, nil
	}}, nil
}

// call compiles the catalogue's functions (t, day, list, items) and the
// builtins the templates use (print, and, not, eq).
func (cp *compiler) call(n parse.Node, fn string, argNodes []parse.Node, dot reflect.Type) (cexpr, error) {
	args := make([]cexpr, len(argNodes))
	for i, a := range argNodes {
		var err error
		if args[i], err = cp.arg(a, dot); err != nil {
			return cexpr{}, err
		}
	}
	want := func(k int) error {
		if len(args) != k {
			return cp.errorf(n, "%s takes %d argument(s), has %d", fn, k, len(args))
		}
		return nil
	}
	c := cp.c
	switch fn {
	case "t":
		if len(args) == 0 || args[0].typ != stringType {
			return cexpr{}, cp.errorf(n, "t needs a key")
		}
		key, err := cp.asString(n, args[0])
		if err != nil {
			return cexpr{}, err
		}
		if typed, ok := cp.typedArgs(args[1:]); ok {
			return cexpr{typ: stringType, str: func(d reflect.Value) (string, error) {
				k, err := key(d)
				if err != nil {
					return "", err
				}
				// The catalogue keeps none of its arguments: a small
				// call's stay on the stack.
				var small [8]catalog.Arg
				as := small[:0]
				if len(typed) > len(small) {
					as = make([]catalog.Arg, 0, len(typed))
				}
				for _, ta := range typed {
					a, err := ta.value(d)
					if err != nil {
						return "", err
					}
					a.Name = ta.name
					as = append(as, a)
				}
				return c.TArgs(k, as)
			}}, nil
		}
		vals := make([]func(reflect.Value) (any, error), len(args)-1)
		for i, a := range args[1:] {
			if vals[i], err = cp.asAny(n, a); err != nil {
				return cexpr{}, err
			}
		}
		return cexpr{typ: stringType, str: func(d reflect.Value) (string, error) {
			k, err := key(d)
			if err != nil {
				return "", err
			}
			buf := make([]any, len(vals))
			for i, v := range vals {
				if buf[i], err = v(d); err != nil {
					return "", err
				}
			}
			return c.T(k, buf...)
		}}, nil
	case "day":
		if err := want(1); err != nil {
			return cexpr{}, err
		}
		if args[0].typ != timeType {
			return cexpr{}, cp.errorf(n, "day of %s, not a time.Time", args[0].typ)
		}
		get := cp.asValue(args[0])
		return cexpr{typ: stringType, str: func(d reflect.Value) (string, error) {
			v, err := get(d)
			if err != nil {
				return "", err
			}
			return c.Date(v.Interface().(time.Time)), nil
		}}, nil
	case "list":
		if err := want(1); err != nil {
			return cexpr{}, err
		}
		if args[0].typ != stringsType {
			return cexpr{}, cp.errorf(n, "list of %s, not a []string", args[0].typ)
		}
		get := cp.asValue(args[0])
		sep := c.MustT("common.list_sep")
		return cexpr{typ: stringType, str: func(d reflect.Value) (string, error) {
			v, err := get(d)
			if err != nil {
				return "", err
			}
			return strings.Join(v.Interface().([]string), sep), nil
		}}, nil
	case "items":
		if err := want(1); err != nil {
			return cexpr{}, err
		}
		key, err := cp.asString(n, args[0])
		if err != nil {
			return cexpr{}, err
		}
		return cexpr{typ: stringsType, rv: func(d reflect.Value) (reflect.Value, error) {
			k, err := key(d)
			if err != nil {
				return reflect.Value{}, err
			}
			return reflect.ValueOf(c.List(k)), nil
		}}, nil
	case "print":
		vals := make([]func(reflect.Value) (any, error), len(args))
		for i, a := range args {
			var err error
			if vals[i], err = cp.asAny(n, a); err != nil {
				return cexpr{}, err
			}
		}
		return cexpr{typ: stringType, str: func(d reflect.Value) (string, error) {
			buf := make([]any, len(vals))
			for i, v := range vals {
				var err error
				if buf[i], err = v(d); err != nil {
					return "", err
				}
			}
			return fmt.Sprint(buf...), nil
		}}, nil
	case "not":
		if err := want(1); err != nil {
			return cexpr{}, err
		}
		c := cp.asCond(args[0])
		return cexpr{typ: boolType, cond: func(d reflect.Value) (bool, error) {
			ok, err := c(d)
			return !ok, err
		}}, nil
	case "and", "or":
		if len(args) < 2 {
			return cexpr{}, cp.errorf(n, "%s needs two arguments", fn)
		}
		conds := make([]func(reflect.Value) (bool, error), len(args))
		for i, a := range args {
			conds[i] = cp.asCond(a)
		}
		// Only the truth of the result is used (asString refuses a cond):
		// and is true when every argument is, or when one is; both stop
		// at the first that decides, as text/template's do.
		stopAt := fn == "or"
		return cexpr{typ: boolType, cond: func(d reflect.Value) (bool, error) {
			for _, c := range conds {
				ok, err := c(d)
				if err != nil || ok == stopAt {
					return ok, err
				}
			}
			return !stopAt, nil
		}}, nil
	case "eq":
		if err := want(2); err != nil {
			return cexpr{}, err
		}
		if args[0].typ != args[1].typ || args[0].typ.Kind() != reflect.String {
			return cexpr{}, cp.errorf(n, "eq of %s and %s: only two strings", args[0].typ, args[1].typ)
		}
		a, err := cp.asString(n, args[0])
		if err != nil {
			return cexpr{}, err
		}
		b, err := cp.asString(n, args[1])
		if err != nil {
			return cexpr{}, err
		}
		return cexpr{typ: boolType, cond: func(d reflect.Value) (bool, error) {
			x, err := a(d)
			if err != nil {
				return false, err
			}
			y, err := b(d)
			return x == y, err
		}}, nil
	}
	return cexpr{}, cp.errorf(n, "function %s", fn)
}

// typedArg is a compiled name, value pair of t.
type typedArg struct {
	name  string
	value func(reflect.Value) (catalog.Arg, error)
}

// typedArgs compiles t's name, value pairs to values written as
// Catalog.Value writes them, chosen by their static types, so that no
// value is put in an interface; ok is false when a name is not a constant
// (t then takes its arguments as any, as text/template gives them).
// Types Value does not single out (named ones included: fmt may call
// their methods) go through Value itself.
func (cp *compiler) typedArgs(args []cexpr) ([]typedArg, bool) {
	if len(args)%2 != 0 {
		return nil, false
	}
	var out []typedArg
	for i := 0; i < len(args); i += 2 {
		name, e := args[i], args[i+1]
		if name.konst == nil || e.cond != nil {
			return nil, false
		}
		c := cp.c
		var f func(reflect.Value) (catalog.Arg, error)
		switch {
		case e.str != nil:
			s := e.str
			f = func(d reflect.Value) (catalog.Arg, error) {
				v, err := s(d)
				return catalog.Arg{Value: v}, err
			}
		default:
			var write func(reflect.Value) catalog.Arg
			switch e.typ {
			case stringType:
				write = func(v reflect.Value) catalog.Arg { return catalog.Arg{Value: v.String()} }
			case intType, int64Type, int32Type:
				write = func(v reflect.Value) catalog.Arg {
					k := v.Int()
					return catalog.Arg{Value: c.Number(k), Count: k, IsCount: true}
				}
			default:
				write = func(v reflect.Value) catalog.Arg { return c.ArgOf(v.Interface()) }
			}
			rv := e.rv
			f = func(d reflect.Value) (catalog.Arg, error) {
				v, err := rv(d)
				if err != nil {
					return catalog.Arg{}, err
				}
				return write(v), nil
			}
		}
		out = append(out, typedArg{*name.konst, f})
	}
	return out, true
}

// asString is e's value as the text it prints: strings only (other types
// would print through fmt, which the templates do not need).
func (cp *compiler) asString(n parse.Node, e cexpr) (func(reflect.Value) (string, error), error) {
	switch {
	case e.typ != stringType || e.cond != nil:
		return nil, cp.errorf(n, "a %s where text is written", e.typ)
	case e.str != nil:
		return e.str, nil
	}
	rv := e.rv
	return func(d reflect.Value) (string, error) {
		v, err := rv(d)
		if err != nil {
			return "", err
		}
		return v.String(), nil
	}, nil
}

// asAny is e's value as a function argument gets it.
func (cp *compiler) asAny(n parse.Node, e cexpr) (func(reflect.Value) (any, error), error) {
	switch {
	case e.cond != nil:
		return nil, cp.errorf(n, "a condition as an argument")
	case e.konst != nil:
		v := any(*e.konst)
		return func(reflect.Value) (any, error) { return v, nil }, nil
	case e.str != nil:
		s := e.str
		return func(d reflect.Value) (any, error) { return s(d) }, nil
	}
	rv := e.rv
	return func(d reflect.Value) (any, error) {
		v, err := rv(d)
		if err != nil {
			return nil, err
		}
		return v.Interface(), nil
	}, nil
}

// asValue is e's value as a reflect.Value (str: boxed).
func (cp *compiler) asValue(e cexpr) func(reflect.Value) (reflect.Value, error) {
	if e.str != nil {
		s := e.str
		return func(d reflect.Value) (reflect.Value, error) {
			v, err := s(d)
			return reflect.ValueOf(v), err
		}
	}
	return e.rv
}

// asCond is e's truth as text/template's if judges it: false, 0, nil and
// empty are false; a struct is true.
func (cp *compiler) asCond(e cexpr) func(reflect.Value) (bool, error) {
	switch {
	case e.cond != nil:
		return e.cond
	case e.str != nil:
		s := e.str
		return func(d reflect.Value) (bool, error) {
			v, err := s(d)
			return v != "", err
		}
	}
	rv := e.rv
	return func(d reflect.Value) (bool, error) {
		v, err := rv(d)
		if err != nil {
			return false, err
		}
		return truth(v), nil
	}
}

func truth(v reflect.Value) bool {
	if !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0
	case reflect.Bool:
		return v.Bool()
	case reflect.Complex64, reflect.Complex128:
		return v.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !v.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != 0
	case reflect.Float32, reflect.Float64:
		return v.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != 0
	}
	return true // struct
}
