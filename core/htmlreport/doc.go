// Package htmlreport writes lmbench report's page: one self-contained HTML
// file (styles and a small checking script inline, every chart an inline
// SVG drawn with gonum/plot) showing finished runs and, for two or more,
// their comparison.
//
// Start with [Write]:
//
//	a, _ := analysis.Load("out-vllm")
//	b, _ := analysis.Load("out-lmcache")
//	err := htmlreport.Write(f, []*analysis.Run{a, b}, htmlreport.Options{})
//
// The data behind each chart is a [Panel] (its kind, axes with units,
// series, reference marks, or why it is empty), computed by [RunGroups]
// and [ComparePanels] and drawn by [Render]; tests pin the panels as JSON
// goldens. A new source of data adds a group to runGroups (panels.go).
// docs/report.md describes every panel.
package htmlreport
