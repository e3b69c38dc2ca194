package pyrand

// The Mersenne Twister MT19937 as in CPython's Modules/_randommodule.c,
// which follows the 2002 reference implementation by Matsumoto and Nishimura.

const (
	mtN         = 624
	mtM         = 397
	matrixA     = 0x9908b0df
	upperMask   = 0x80000000
	lowerMask   = 0x7fffffff
	initGenrand = 19650218
)

type mt19937 struct {
	state [mtN]uint32
	index int
}

func (m *mt19937) initGenrand(s uint32) {
	m.state[0] = s
	for i := 1; i < mtN; i++ {
		prev := m.state[i-1]
		m.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	m.index = mtN
}

func (m *mt19937) initByArray(key []uint32) {
	m.initGenrand(initGenrand)
	i, j := 1, 0
	k := max(mtN, len(key))
	for ; k > 0; k-- {
		prev := m.state[i-1]
		m.state[i] = (m.state[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			m.state[0] = m.state[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = mtN - 1; k > 0; k-- {
		prev := m.state[i-1]
		m.state[i] = (m.state[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			m.state[0] = m.state[mtN-1]
			i = 1
		}
	}
	m.state[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

func (m *mt19937) uint32() uint32 {
	if m.index >= mtN {
		m.twist()
	}
	y := m.state[m.index]
	m.index++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

func (m *mt19937) twist() {
	mag01 := [2]uint32{0, matrixA}
	var kk int
	for ; kk < mtN-mtM; kk++ {
		y := (m.state[kk] & upperMask) | (m.state[kk+1] & lowerMask)
		m.state[kk] = m.state[kk+mtM] ^ (y >> 1) ^ mag01[y&1]
	}
	for ; kk < mtN-1; kk++ {
		y := (m.state[kk] & upperMask) | (m.state[kk+1] & lowerMask)
		m.state[kk] = m.state[kk+(mtM-mtN)] ^ (y >> 1) ^ mag01[y&1]
	}
	y := (m.state[mtN-1] & upperMask) | (m.state[0] & lowerMask)
	m.state[mtN-1] = m.state[mtM-1] ^ (y >> 1) ^ mag01[y&1]
	m.index = 0
}
