// Command funclen fails when a function is longer than -max lines (from
// its func keyword to its closing brace), unless its doc comment says why
// in a line starting "long:". Tests, generated code (.pb.go), testdata and
// the deploy/ validator are left out. make lint runs it over the tree.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	limit := flag.Int("max", 80, "longest function allowed, in lines")
	top := flag.Int("top", 0, "instead: list the N longest functions and exit 0")
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var long []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "testdata" || n == "deploy" || n == "node_modules" || (strings.HasPrefix(n, ".") && n != ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, ".pb.go") {
				return nil
			}
			lim := *limit
			if *top > 0 {
				lim = 0
			}
			found, err := check(p, lim)
			long = append(long, found...)
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
	}
	if *top > 0 {
		printTop(long, *top)
		return
	}
	sort.Strings(long)
	for _, l := range long {
		fmt.Println(l)
	}
	if len(long) > 0 {
		fmt.Printf("%d functions over %d lines: split them, or say why in a doc comment line starting \"long:\"\n", len(long), *limit)
		os.Exit(1)
	}
}

// check lists the functions of one file longer than limit lines.
func check(path string, limit int) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Pos()).Line + 1
		if n <= limit || (limit > 0 && excused(fd.Doc)) {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d: %s is %d lines", path, fset.Position(fd.Pos()).Line, name(fd), n))
	}
	return out, nil
}

// excused reports whether a doc comment says why its function is long.
func excused(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), "long:") {
			return true
		}
	}
	return false
}

// name is Recv.Func or Func.
func name(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// printTop prints the n longest of found ("path:line: name is N lines"),
// longest first, excused ones included.
func printTop(found []string, n int) {
	lines := func(s string) int {
		var k int
		fmt.Sscanf(s[strings.LastIndex(s, " is ")+4:], "%d", &k)
		return k
	}
	sort.SliceStable(found, func(i, j int) bool { return lines(found[i]) > lines(found[j]) })
	for _, l := range found[:min(n, len(found))] {
		fmt.Println(l)
	}
}
