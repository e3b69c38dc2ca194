package twin

import (
	"errors"
	"math"
	"slices"
)

// fit is one least-squares solution: the coefficients, their standard
// errors and the residuals' scale.
type fit struct {
	coef, stderr []float64
	rss          float64
	n            int
	used         []bool // the rows kept by the trimming
}

// leastSquares fits y ≈ X·b by ordinary least squares (the normal
// equations, solved by Gaussian elimination with pivoting), giving each
// coefficient's standard error from the residual variance.
func leastSquares(x [][]float64, y []float64, keep []bool) (fit, error) {
	k := len(x[0])
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1)
	}
	n := 0
	for r := range x {
		if keep != nil && !keep[r] {
			continue
		}
		n++
		for i := range k {
			for j := range k {
				a[i][j] += x[r][i] * x[r][j]
			}
			a[i][k] += x[r][i] * y[r]
		}
	}
	if n <= k {
		return fit{}, errors.New("fewer samples than parameters")
	}
	inv, coef, err := solve(a)
	if err != nil {
		return fit{}, err
	}
	f := fit{coef: coef, n: n, stderr: make([]float64, k), used: keep}
	for r := range x {
		if keep != nil && !keep[r] {
			continue
		}
		e := y[r] - dot(x[r], coef)
		f.rss += e * e
	}
	s2 := f.rss / float64(n-k)
	for i := range k {
		f.stderr[i] = math.Sqrt(max(inv[i][i]*s2, 0))
	}
	return f, nil
}

// solve inverts the k×k normal matrix in a's first k columns and solves
// it against column k: Gauss-Jordan with partial pivoting.
func solve(a [][]float64) (inv [][]float64, x []float64, err error) {
	k := len(a)
	m := make([][]float64, k)
	for i := range m {
		m[i] = make([]float64, 2*k+1)
		copy(m[i], a[i][:k])
		m[i][k+i] = 1
		m[i][2*k] = a[i][k]
	}
	for c := range k {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) < 1e-300 {
			return nil, nil, errors.New("the samples do not tell the parameters apart")
		}
		m[c], m[p] = m[p], m[c]
		d := m[c][c]
		for j := range m[c] {
			m[c][j] /= d
		}
		for r := range k {
			if r == c || m[r][c] == 0 {
				continue
			}
			f := m[r][c]
			for j := range m[r] {
				m[r][j] -= f * m[c][j]
			}
		}
	}
	inv = make([][]float64, k)
	x = make([]float64, k)
	for i := range k {
		inv[i] = m[i][k : 2*k]
		x[i] = m[i][2*k]
	}
	return inv, x, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// robust fits, drops the rows whose residual is more than 4 robust
// standard deviations (1.4826 × the median absolute residual) from the
// fit, and fits again, twice: a request slowed by the busy machine, or
// queued behind something the model does not see, does not pull the
// others' line.
func robust(x [][]float64, y []float64) (fit, error) {
	f, err := leastSquares(x, y, nil)
	if err != nil {
		return f, err
	}
	for range 2 {
		res := make([]float64, len(y))
		for r := range y {
			res[r] = math.Abs(y[r] - dot(x[r], f.coef))
		}
		mad := median(slices.Clone(res)) * 1.4826
		if mad == 0 {
			break
		}
		keep := make([]bool, len(y))
		for r := range y {
			keep[r] = res[r] <= 4*mad
		}
		g, err := leastSquares(x, y, keep)
		if err != nil {
			break
		}
		f = g
	}
	return f, nil
}

// median of v (sorted in place); NaN when empty.
func median(v []float64) float64 { return quantile(v, 0.5) }

// quantile of v (sorted in place), interpolated; NaN when empty.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(v)-1)
	return v[lo] + (v[hi]-v[lo])*(pos-float64(lo))
}
