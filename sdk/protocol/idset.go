package protocol

import (
	"encoding/binary"
	"os"
	"slices"
)

// idSet holds 64-bit hashes of the request ids seen in a run, exactly,
// in memory that does not grow with the run. The first memIDs hashes
// live in memory (sorted runs and a short unsorted tail); past that, new
// hashes go to a file of 4 KiB pages, one chain of pages per bucket of the
// hash space (an unlinked temporary file, which the page cache serves:
// one or a few page reads per lookup), and the in-memory ones follow a
// few at a time, so no insert ever stalls the run loop for long. A long
// run's id check then costs the host no memory, so its RSS stays flat.
// Without a temporary file (none can be created or written), everything
// stays in memory, still exact.
type idSet struct {
	runs [][]uint64 // sorted; sizes decrease from the first to the last
	tail []uint64   // unsorted
	n    int        // in runs and tail

	memLimit int // hashes kept in memory before the file takes over (0: memIDs)
	disk     *pageFile
	noDisk   bool // the file could not be made or written: memory only
}

const (
	idTail = 256
	memIDs = 4096 // 32 KiB
	// idsMoved is how many in-memory hashes follow each new one to the file.
	idsMoved = 64
)

func (s *idSet) has(h uint64) bool {
	if slices.Contains(s.tail, h) {
		return true
	}
	for _, r := range s.runs {
		if _, ok := slices.BinarySearch(r, h); ok {
			return true
		}
	}
	return s.disk != nil && s.disk.has(h)
}

func (s *idSet) add(h uint64) {
	if s.disk == nil && !s.noDisk && s.n >= s.limit() {
		if d, err := newPageFile(); err == nil {
			s.disk = d
		} else {
			s.noDisk = true
		}
	}
	if s.disk != nil {
		if err := s.disk.add(h); err == nil {
			s.move(idsMoved)
			return
		}
		s.noDisk = true // keep what the file has, and the rest in memory
		s.move(0)
	}
	s.tail = append(s.tail, h)
	s.n++
	if len(s.tail) < idTail {
		return
	}
	run := slices.Clone(s.tail)
	slices.Sort(run)
	s.tail = s.tail[:0]
	s.runs = append(s.runs, run)
	for n := len(s.runs); n >= 2 && len(s.runs[n-1]) >= len(s.runs[n-2]); n = len(s.runs) {
		s.runs[n-2] = merge(s.runs[n-2], s.runs[n-1])
		s.runs = s.runs[:n-1]
	}
}

func (s *idSet) limit() int {
	if s.memLimit > 0 {
		return s.memLimit
	}
	return memIDs
}

// move hands up to k in-memory hashes to the file (none when it failed).
func (s *idSet) move(k int) {
	for ; k > 0 && s.disk != nil && !s.noDisk; k-- {
		var h uint64
		switch {
		case len(s.tail) > 0:
			h, s.tail = s.tail[len(s.tail)-1], s.tail[:len(s.tail)-1]
		case len(s.runs) > 0:
			r := s.runs[len(s.runs)-1]
			h = r[len(r)-1]
			if r = r[:len(r)-1]; len(r) == 0 {
				s.runs = s.runs[:len(s.runs)-1]
			} else {
				s.runs[len(s.runs)-1] = r
			}
		default:
			return
		}
		if err := s.disk.add(h); err != nil {
			s.noDisk = true
			s.tail = append(s.tail, h) // still in memory: nothing is lost
			return
		}
		s.n--
	}
}

func (s *idSet) close() {
	if s.disk != nil {
		s.disk.f.Close()
		s.disk = nil
	}
}

func merge(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return append(append(out, a[i:]...), b[j:]...)
}

// pageFile keeps hashes in a file: the top bits of a hash pick its
// bucket, and each bucket is a chain of 4 KiB pages appended to the file
// as they fill. Memory: a few bytes per page.
type pageFile struct {
	f       *os.File
	buckets [pageBuckets]pageChain
	end     int64
	page    [pageBytes]byte
}

type pageChain struct {
	pages []int64 // offsets of the bucket's pages, the last one filling
	last  int     // hashes in the last page
}

const (
	pageBuckets = 4096
	pageBytes   = 4096
	perPage     = pageBytes / 8
)

func newPageFile() (*pageFile, error) {
	f, err := os.CreateTemp("", "lmbench-request-ids-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // unlinked: gone when closed, or when the process ends
	return &pageFile{f: f}, nil
}

func (p *pageFile) chain(h uint64) *pageChain { return &p.buckets[h>>(64-12)] }

func (p *pageFile) has(h uint64) bool {
	c := p.chain(h)
	for i, off := range c.pages {
		n := perPage
		if i == len(c.pages)-1 {
			n = c.last
		}
		if _, err := p.f.ReadAt(p.page[:n*8], off); err != nil {
			return false
		}
		for j := 0; j < n; j++ {
			if binary.LittleEndian.Uint64(p.page[j*8:]) == h {
				return true
			}
		}
	}
	return false
}

func (p *pageFile) add(h uint64) error {
	c := p.chain(h)
	if len(c.pages) == 0 || c.last == perPage {
		c.pages = append(c.pages, p.end)
		c.last = 0
		p.end += pageBytes
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h)
	if _, err := p.f.WriteAt(b[:], c.pages[len(c.pages)-1]+int64(c.last)*8); err != nil {
		if c.last == 0 { // the new page is not there after all
			c.pages = c.pages[:len(c.pages)-1]
			c.last = perPage
		}
		return err
	}
	c.last++
	return nil
}
