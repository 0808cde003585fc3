// Package catalog holds the words leakmap writes to people: one message
// catalogue per language (templates/catalog/LANG.yaml), read once. Notices,
// the regulator notice, the Regulator sheet and the report's labels all take
// their sentences from here, so no wording lives in Go.
//
// A message is a string, or plural forms keyed by CLDR category (zero, one,
// two, few, many, other) chosen by the argument "n" under the language's
// rules (golang.org/x/text/feature/plural: French treats 0 and 1 as
// singular). Placeholders are {name}; numbers are written with the
// language's digit grouping, times as the language writes a date in prose.
package catalog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/leakmap/leakmap/templates"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// Languages are the catalogue's languages, in a fixed order.
var Languages = []string{"en", "fr"}

// Catalog is one language's words.
type Catalog struct {
	Lang   string
	tag    language.Tag
	msgs   map[string]message
	lists  map[string][]string
	months []string
	locale localeFile
}

type message struct {
	text  string
	forms map[plural.Form]string
}

type localeFile struct {
	Months   []string `yaml:"months"`
	Date     string   `yaml:"date"`
	DateTime string   `yaml:"datetime"`
	FirstDay string   `yaml:"first_day"`
	Group    string   `yaml:"group"`
}

var (
	once sync.Once
	cats map[string]*Catalog
	err  error
)

// Get returns the catalogue of lang; it panics on an unknown language or a
// catalogue that does not load, both programming errors caught by the tests.
func Get(lang string) *Catalog {
	c, e := Load(lang)
	if e != nil {
		panic(e)
	}
	return c
}

// Load returns the catalogue of lang.
func Load(lang string) (*Catalog, error) {
	once.Do(func() {
		cats = map[string]*Catalog{}
		for _, l := range Languages {
			c, e := parse(l)
			if e != nil {
				err = e
				return
			}
			cats[l] = c
		}
	})
	if err != nil {
		return nil, err
	}
	c, ok := cats[lang]
	if !ok {
		return nil, fmt.Errorf("no message catalogue for language %q", lang)
	}
	return c, nil
}

var formNames = map[string]plural.Form{"zero": plural.Zero, "one": plural.One, "two": plural.Two,
	"few": plural.Few, "many": plural.Many, "other": plural.Other}

func parse(lang string) (*Catalog, error) {
	name := "catalog/" + lang + ".yaml"
	data, e := templates.FS.ReadFile(name)
	if e != nil {
		return nil, fmt.Errorf("message catalogue: %w", e)
	}
	var raw map[string]any
	if e := yaml.Unmarshal(data, &raw); e != nil {
		return nil, fmt.Errorf("templates/%s: %w", name, e)
	}
	c := &Catalog{Lang: lang, tag: language.Make(lang), msgs: map[string]message{}, lists: map[string][]string{}}
	loc, _ := raw["locale"].(map[string]any)
	delete(raw, "locale")
	b, _ := yaml.Marshal(loc)
	if e := yaml.Unmarshal(b, &c.locale); e != nil || len(c.locale.Months) != 12 || c.locale.DateTime == "" || c.locale.Date == "" {
		return nil, fmt.Errorf("templates/%s: locale needs 12 months, date and datetime", name)
	}
	var walk func(prefix string, v any) error
	walk = func(prefix string, v any) error {
		switch x := v.(type) {
		case string:
			c.msgs[prefix] = message{text: x}
		case []any:
			for _, it := range x {
				s, ok := it.(string)
				if !ok {
					return fmt.Errorf("templates/%s: %s: a list holds strings only", name, prefix)
				}
				c.lists[prefix] = append(c.lists[prefix], s)
			}
		case map[string]any:
			if _, ok := x["other"]; ok {
				m := message{forms: map[plural.Form]string{}}
				for k, s := range x {
					f, ok := formNames[k]
					str, isStr := s.(string)
					if !ok || !isStr {
						return fmt.Errorf("templates/%s: %s: plural forms are zero, one, two, few, many, other (strings)", name, prefix)
					}
					m.forms[f] = str
				}
				c.msgs[prefix] = m
				return nil
			}
			for k, s := range x {
				if err := walk(join(prefix, k), s); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("templates/%s: %s: unexpected value %v", name, prefix, v)
		}
		return nil
	}
	if e := walk("", raw); e != nil {
		return nil, e
	}
	return c, nil
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// Keys lists the catalogue's message and list keys, sorted.
func (c *Catalog) Keys() []string {
	var out []string
	for k := range c.msgs {
		out = append(out, k)
	}
	for k := range c.lists {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Texts returns every message, plural form and list item as written in
// the catalogue (placeholders unfilled), in key order: all of leakmap's
// own words in this language.
func (c *Catalog) Texts() []string {
	var out []string
	for _, k := range c.Keys() {
		if m, ok := c.msgs[k]; ok {
			if m.forms == nil {
				out = append(out, m.text)
			}
			for _, f := range []plural.Form{plural.Zero, plural.One, plural.Two, plural.Few, plural.Many, plural.Other} {
				if s, ok := m.forms[f]; ok {
					out = append(out, s)
				}
			}
		}
		out = append(out, c.lists[k]...)
	}
	out = append(out, c.locale.Months...)
	return out
}

// Has says whether key is a message of the catalogue.
func (c *Catalog) Has(key string) bool {
	_, ok := c.msgs[key]
	return ok
}

// T writes message key with its placeholders filled from args, given as
// name, value pairs. A message with plural forms picks its form from "n".
// An unknown key or placeholder is an error: templates run with it and fail.
func (c *Catalog) T(key string, args ...any) (string, error) {
	m, ok := c.msgs[key]
	if !ok {
		return "", fmt.Errorf("catalogue %s: no message %q", c.Lang, key)
	}
	if len(args)%2 != 0 {
		return "", fmt.Errorf("catalogue %s: %s: arguments go in name, value pairs", c.Lang, key)
	}
	var buf [8]Arg
	as := buf[:0]
	for i := 0; i < len(args); i += 2 {
		name, ok := args[i].(string)
		if !ok {
			return "", fmt.Errorf("catalogue %s: %s: argument name %v is not a string", c.Lang, key, args[i])
		}
		a := c.ArgOf(args[i+1])
		a.Name = name
		as = append(as, a)
	}
	return c.fillArgs(key, m, as)
}

// Arg is one placeholder's value for TArgs: written already, as Value
// writes it, and for a count (an int, int32 or int64) the count itself,
// which picks a plural form when the name is "n".
type Arg struct {
	Name, Value string
	Count       int64
	IsCount     bool
}

// TArgs is T for a caller that writes its values itself (the notices'
// compiled templates, which know their types): no interface per value.
func (c *Catalog) TArgs(key string, args []Arg) (string, error) {
	m, ok := c.msgs[key]
	if !ok {
		return "", fmt.Errorf("catalogue %s: no message %q", c.Lang, key)
	}
	return c.fillArgs(key, m, args)
}

func (c *Catalog) fillArgs(key string, m message, args []Arg) (string, error) {
	var buf [8]namedValue
	vals := values(buf[:0])
	text := m.text
	for _, a := range args {
		vals = append(vals, namedValue{a.Name, a.Value})
		if a.Name == "n" && m.forms != nil {
			if !a.IsCount {
				return "", fmt.Errorf("catalogue %s: %s: n is not a count", c.Lang, key)
			}
			text = c.form(m, a.Count)
		}
	}
	if m.forms != nil && text == "" {
		return "", fmt.Errorf("catalogue %s: %s has plural forms and needs n", c.Lang, key)
	}
	return fill(c.Lang, key, text, vals)
}

// MustT is T for callers whose keys the tests cover; it panics on an error.
func (c *Catalog) MustT(key string, args ...any) string {
	s, e := c.T(key, args...)
	if e != nil {
		panic(e)
	}
	return s
}

// List returns the list at key (nil when absent).
func (c *Catalog) List(key string) []string {
	return slices.Clone(c.lists[key])
}

// ListT returns the list at key with each item's placeholders filled from
// args (name, value pairs, as for T).
func (c *Catalog) ListT(key string, args ...any) ([]string, error) {
	items, ok := c.lists[key]
	if !ok {
		return nil, fmt.Errorf("catalogue %s: no list %q", c.Lang, key)
	}
	var vals values
	for i := 0; i+1 < len(args); i += 2 {
		name, _ := args[i].(string)
		vals = append(vals, namedValue{name, c.Value(args[i+1])})
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, e := fill(c.Lang, key, it, vals)
		if e != nil {
			return nil, e
		}
		out[i] = s
	}
	return out, nil
}

// Duration writes d in whole hours and minutes, in words ("26 hours and 5 minutes").
func (c *Catalog) Duration(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int64(d/time.Hour), int64(d%time.Hour/time.Minute)
	hs, ms := c.MustT("common.duration_hours", "n", h), c.MustT("common.duration_minutes", "n", m)
	switch {
	case h == 0:
		return ms
	case m == 0:
		return hs
	}
	return hs + c.MustT("common.and") + ms
}

func (c *Catalog) form(m message, n int64) string {
	i := n
	if i < 0 {
		i = -i
	}
	f := plural.Cardinal.MatchPlural(c.tag, int(i), 0, 0, 0, 0)
	if s, ok := m.forms[f]; ok {
		return s
	}
	return m.forms[plural.Other]
}

// namedValue is a placeholder's value; values holds a call's in the
// order given, and the last of a name wins (as assigning a map would): a
// handful of pairs, searched, instead of a map made for every call.
type namedValue struct{ name, value string }

type values []namedValue

func (vs values) get(name string) (string, bool) {
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].name == name {
			return vs[i].value, true
		}
	}
	return "", false
}

func fill(lang, key, text string, vals values) (string, error) {
	if strings.IndexByte(text, '{') < 0 {
		return text, nil // no placeholder: the text itself, not a copy
	}
	var b strings.Builder
	b.Grow(len(text) + 16)
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			b.WriteString(text)
			return b.String(), nil
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("catalogue %s: %s: unclosed {", lang, key)
		}
		name := text[i+1 : i+j]
		v, ok := vals.get(name)
		if !ok {
			return "", fmt.Errorf("catalogue %s: %s: no value for {%s}", lang, key, name)
		}
		b.WriteString(text[:i])
		b.WriteString(v)
		text = text[i+j+1:]
	}
}

// ArgOf is v as T passes it to a message (its Name left to the caller):
// written as Value writes it, and its count if it is one.
func (c *Catalog) ArgOf(v any) Arg {
	a := Arg{Value: c.Value(v)}
	a.Count, a.IsCount = asInt(v)
	return a
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	}
	return 0, false
}

// Value writes a placeholder's value: counts grouped, times in prose.
func (c *Catalog) Value(v any) string {
	if n, ok := asInt(v); ok {
		return c.Number(n)
	}
	switch x := v.(type) {
	case time.Time:
		return c.DateTime(x)
	case *time.Time:
		if x == nil {
			return ""
		}
		return c.DateTime(*x)
	case string:
		return x
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// Number writes n with the language's digit grouping (1,840; 1 840).
func (c *Catalog) Number(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(c.locale.Group)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DateTime writes t (in UTC) as the language writes a time in prose:
// "27 August 2026, 00:00 UTC", "27 août 2026 à 00:00 UTC".
func (c *Catalog) DateTime(t time.Time) string {
	t = t.UTC()
	s, _ := fill(c.Lang, "locale.datetime", c.locale.DateTime, c.dateParts(t))
	return s
}

// Date writes t's UTC day in prose: "27 August 2026", "1er septembre 2026".
func (c *Catalog) Date(t time.Time) string {
	t = t.UTC()
	s, _ := fill(c.Lang, "locale.date", c.locale.Date, c.dateParts(t))
	return s
}

func (c *Catalog) dateParts(t time.Time) values {
	day := strconv.Itoa(t.Day())
	if t.Day() == 1 && c.locale.FirstDay != "" {
		day = c.locale.FirstDay
	}
	return values{{"day", day}, {"month", c.locale.Months[t.Month()-1]}, {"year", strconv.Itoa(t.Year())},
		{"time", t.Format("15:04")}}
}
