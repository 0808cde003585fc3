package notify

import (
	"fmt"
	"slices"
	"testing"
)

// The identifier table finds every identifier with each of its owners and
// kinds, once however often it was added, and nothing else; a digest is
// generic for all its owners when it is for one; the manifest file's order
// (owner key, kind, digest) is kept.
func TestIDTable(t *testing.T) {
	x := newHasher()
	var tb idTable
	type id struct {
		owner, kind string
		words       []string
	}
	var all []id
	for i := range 3000 {
		o := fmt.Sprintf("owner-%03d", i%97)
		all = append(all, id{o, "request_id", []string{"r", fmt.Sprint(i)}})
		if i%10 == 0 {
			all = append(all, id{o, "name", []string{"shared", fmt.Sprint(i % 7)}}) // one name, several owners
		}
	}
	for round := range 2 { // everything twice
		for _, e := range all {
			generic := round == 1 && e.kind == "name" && e.owner == "owner-000"
			if err := tb.add(e.owner, e.kind, len(e.words), x.kgram(e.words), generic, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	tb.seal()
	want := map[digest][]string{}
	for _, e := range all {
		k := e.owner + "/" + e.kind
		d := x.kgram(e.words)
		if !slices.Contains(want[d], k) {
			want[d] = append(want[d], k)
		}
	}
	if tb.distinct != len(want) {
		t.Fatalf("%d distinct digests, want %d", tb.distinct, len(want))
	}
	for d, owners := range want {
		var got []string
		for _, r := range tb.lookup(d) {
			got = append(got, tb.owners[r.owner]+"/"+tb.kinds[r.kind])
		}
		slices.Sort(got)
		slices.Sort(owners)
		if !slices.Equal(got, owners) {
			t.Fatalf("%x: %v, want %v", d, got, owners)
		}
	}
	for i := range 1000 {
		if r := tb.lookup(x.kgram([]string{"absent", fmt.Sprint(i)})); r != nil {
			t.Fatalf("absent %d found: %v", i, r)
		}
	}
	for i := range 7 {
		d := x.kgram([]string{"shared", fmt.Sprint(i)})
		if !tb.isGeneric(d) && i == 0 {
			t.Error("the name owner-000 marks generic is not generic for the others")
		}
	}
	if tb.isGeneric(x.kgram([]string{"r", "5"})) {
		t.Error("a request id taken as generic")
	}
	if tb.generics == 0 {
		t.Error("no generic digest counted")
	}
	perm := tb.byOwner()
	if len(perm) != len(tb.recs) {
		t.Fatalf("byOwner: %d of %d records", len(perm), len(tb.recs))
	}
	for i := 1; i < len(perm); i++ {
		a, b := tb.recs[perm[i-1]], tb.recs[perm[i]]
		ka := tb.owners[a.owner] + "\x00" + tb.kinds[a.kind] + "\x00" + string(a.d[:])
		kb := tb.owners[b.owner] + "\x00" + tb.kinds[b.kind] + "\x00" + string(b.d[:])
		if ka >= kb {
			t.Fatalf("byOwner out of order at %d", i)
		}
	}
}
