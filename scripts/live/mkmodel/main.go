// Command mkmodel writes the live tier's model: a small random-weight
// Llama-architecture checkpoint (config.json, model.safetensors) beside a
// real tokenizer (tokenizer.json, tokenizer_config.json copied from -tokenizer),
// ready for `ollama create` (Modelfile: FROM <dir>).
//
// Random weights make greedy decoding repeat one token or emit byte
// fragments, so the output layer is shaped to make every answer real words
// up to max_tokens. Every attention and MLP output projection is zero, so
// the last hidden state is the normed embedding of the input token; the
// output row of each token of a chain is the normed embedding of its
// predecessor, so greedy decoding follows the chain:
//
//	"\n\n" (the end of the chat template) -> entry -> w0 -> w1 -> ... -> w(n-1) -> w0
//
// entry is a word without a leading space (an answer then needs no trim to
// re-tokenize the same), w0..w(n-1) are words with one; other rows are zero,
// so whatever the prompt's last token, a chain word wins. It never emits an
// end-of-sequence token, and never repeats a token twice in a row. The
// chain is checked here in float64 on the weights as written.
//
// The layers still do their full work (the projections are real matrices,
// only the outputs are zero), so prefill costs what a model of this shape
// costs: -layers and -intermediate set how long a prompt takes.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// params are the checkpoint's shape and the chain's length.
type params struct {
	hidden, intermediate, layers, heads, cycle int
	seed                                       uint64
}

func main() {
	var p params
	tokDir := flag.String("tokenizer", "", "folder holding tokenizer.json and tokenizer_config.json (required)")
	out := flag.String("out", "", "folder to write the checkpoint into (required)")
	flag.IntVar(&p.hidden, "hidden", 64, "hidden size")
	flag.IntVar(&p.intermediate, "intermediate", 512, "MLP intermediate size")
	flag.IntVar(&p.layers, "layers", 2, "decoder layers")
	flag.IntVar(&p.heads, "heads", 4, "attention heads")
	flag.IntVar(&p.cycle, "cycle", 200, "words in the output cycle")
	flag.Uint64Var(&p.seed, "seed", 1, "random seed")
	flag.Parse()
	if err := run(*tokDir, *out, p); err != nil {
		fmt.Fprintln(os.Stderr, "mkmodel:", err)
		os.Exit(1)
	}
}

func run(tokDir, out string, p params) error {
	if tokDir == "" || out == "" {
		return errors.New("-tokenizer and -out are required")
	}
	if p.hidden%p.heads != 0 {
		return fmt.Errorf("-hidden %d: must be a multiple of -heads %d", p.hidden, p.heads)
	}
	vocab, err := readVocab(filepath.Join(tokDir, "tokenizer.json"))
	if err != nil {
		return err
	}
	ch, err := pickChain(vocab.words, p.cycle)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if err := copyFile(filepath.Join(tokDir, name), filepath.Join(out, name)); err != nil {
			return err
		}
	}
	if err := writeConfig(filepath.Join(out, "config.json"), p, vocab); err != nil {
		return err
	}
	w := buildWeights(p, vocab.size, ch)
	if err := w.checkChain(vocab.size, ch); err != nil {
		return err
	}
	if err := writeSafetensors(filepath.Join(out, "model.safetensors"), w.tensors); err != nil {
		return err
	}
	fmt.Printf("wrote %s: vocab %d, hidden %d, %d layers, intermediate %d, chain %q -> %q ... (%d words)\n",
		out, vocab.size, p.hidden, p.layers, p.intermediate, vocab.words[ch.entry], vocab.words[ch.cycle[0]], len(ch.cycle))
	return nil
}

// vocab is what the checkpoint needs of the tokenizer.
type vocab struct {
	size     int            // token ids, added tokens included
	words    map[int]string // id -> token string of the BPE vocabulary
	bos, eos int
}

func readVocab(path string) (vocab, error) {
	var tj struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
		Added []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
		} `json:"added_tokens"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return vocab{}, err
	}
	if err := json.Unmarshal(b, &tj); err != nil {
		return vocab{}, fmt.Errorf("%s: %w", path, err)
	}
	v := vocab{words: map[int]string{}, bos: -1, eos: -1}
	for s, id := range tj.Model.Vocab {
		v.words[id] = s
		v.size = max(v.size, id+1)
	}
	for _, a := range tj.Added {
		v.size = max(v.size, a.ID+1)
		switch a.Content {
		case "<|begin_of_text|>":
			v.bos = a.ID
		case "<|end_of_text|>":
			v.eos = a.ID
		}
	}
	if len(v.words) == 0 || v.bos < 0 || v.eos < 0 {
		return vocab{}, fmt.Errorf("%s: want a BPE vocabulary with <|begin_of_text|> and <|end_of_text|>, got %d tokens, bos %d, eos %d",
			path, len(v.words), v.bos, v.eos)
	}
	return v, nil
}

// chain is the token path greedy decoding follows.
type chain struct {
	start int   // the chat template's last token, "\n\n"
	entry int   // the answer's first word, no leading space
	cycle []int // the words after it, each with a leading space, w(n-1) -> w0
}

// words are common English words; the chain takes those the vocabulary
// has as one token with a leading space (so an answer is whole words, and
// its text encodes back to the same tokens). The first the vocabulary also
// has without the space starts every answer.
const words = `the answer begins with a plain word and goes on with other words
about after again air all also always animal another any area around away back
base become before began being below best better between big black blue boat
body book both bring build built call came car care carry case cause center
change children city class clear close cold color come common complete could
country course cover cross cut dark day deep did different direction does dog
done door down draw during each early earth east easy eat end enough even
ever every example eye face fact fall family far farm fast father feel feet
few field fill final find fine fire first fish five fly follow food foot form
found four free friend from full game gave general get girl give gold good got
government great green ground group grow half hand happen hard have head hear
heard heat help here high hold home horse hot hour house however idea important
inch island just keep kind king knew know land language large last later learn
leave left less letter light line list little live long look made main make
many map mark matter mean measure men might mile mind minute miss money moon
more morning most mother mountain move much music must name near need never
new next night north nothing notice now number object ocean off office often
old once only open order other our out over own page paper part pass past
people picture piece place plan plant play point power press problem produce
program public pull question quick rain ran reach read ready real record red
remember rest right river road rock room round rule run said same saw school
science sea second see seem self sentence serve set several shape ship short
should show side simple since sing size sleep slow small snow some song soon
sound south space special spell stand star start state step still stood stop
story street strong study such summer sun sure surface system table tail take
talk teach tell ten test than that their them then there these they thing
think this those though thought three through time today together told too
took top toward town travel tree true turn under unit until upon very voice
walk wall want warm watch water wave way week weight well went were west what
wheel when where which while white whole why wide will wind winter with wonder
wood word work world would write year yes yet young`

// pickChain finds the chat template's end and the words in the vocabulary.
func pickChain(vocab map[int]string, n int) (chain, error) {
	ids := map[string]int{}
	for id, s := range vocab {
		ids[s] = id
	}
	c := chain{start: -1, entry: -1}
	if id, ok := ids["ĊĊ"]; ok {
		c.start = id
	}
	for _, w := range strings.Fields(words) {
		id, ok := ids["Ġ"+w]
		if !ok || slices.Contains(c.cycle, id) {
			continue
		}
		if bare, ok := ids[w]; ok && c.entry < 0 && len(w) > 1 {
			c.entry = bare
			continue
		}
		if len(c.cycle) < n {
			c.cycle = append(c.cycle, id)
		}
	}
	if c.start < 0 || c.entry < 0 || len(c.cycle) < n {
		return c, fmt.Errorf("vocabulary: want \"ĊĊ\", a word without a leading space and %d with one, got %d, %d, %d",
			n, c.start, c.entry, len(c.cycle))
	}
	return c, nil
}

// tensor is one safetensors entry, stored as BF16 unless f32.
type tensor struct {
	name  string
	shape []int
	data  []float32
	f32   bool
}

type weights struct {
	tensors []tensor
	embed   []float32 // [vocab][hidden], as rounded to BF16
	head    []float32 // [vocab][hidden], as rounded to BF16
	hidden  int
}

func buildWeights(p params, vsize int, ch chain) weights {
	r := rand.New(rand.NewPCG(p.seed, 0x6c6d62656e6368))
	h := p.hidden
	randn := func(n int, scale float64) []float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = bf16(float32(r.NormFloat64() * scale))
		}
		return d
	}
	ones := func(n int) []float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = 1
		}
		return d
	}
	w := weights{hidden: h, embed: randn(vsize*h, 1), head: make([]float32, vsize*h)}
	// The output row of each chain token is the normed embedding of its
	// predecessor; w0 has two (entry and w(n-1)), so it gets both.
	prev := map[int][]int{ch.entry: {ch.start}, ch.cycle[0]: {ch.entry, ch.cycle[len(ch.cycle)-1]}}
	for k := 1; k < len(ch.cycle); k++ {
		prev[ch.cycle[k]] = []int{ch.cycle[k-1]}
	}
	for tok, ps := range prev {
		row := w.head[tok*h : (tok+1)*h]
		for _, pt := range ps {
			for i, x := range normed(w.embed[pt*h : (pt+1)*h]) {
				row[i] += float32(x)
			}
		}
		for i := range row {
			row[i] = bf16(row[i])
		}
	}
	w.tensors = append(w.tensors, tensor{name: "model.embed_tokens.weight", shape: []int{vsize, h}, data: w.embed})
	proj := 1 / math.Sqrt(float64(h))
	for l := range p.layers {
		pre := fmt.Sprintf("model.layers.%d.", l)
		w.tensors = append(w.tensors,
			tensor{name: pre + "input_layernorm.weight", shape: []int{h}, data: ones(h), f32: true},
			tensor{name: pre + "self_attn.q_proj.weight", shape: []int{h, h}, data: randn(h*h, proj)},
			tensor{name: pre + "self_attn.k_proj.weight", shape: []int{h, h}, data: randn(h*h, proj)},
			tensor{name: pre + "self_attn.v_proj.weight", shape: []int{h, h}, data: randn(h*h, proj)},
			tensor{name: pre + "self_attn.o_proj.weight", shape: []int{h, h}, data: make([]float32, h*h)},
			tensor{name: pre + "post_attention_layernorm.weight", shape: []int{h}, data: ones(h), f32: true},
			tensor{name: pre + "mlp.gate_proj.weight", shape: []int{p.intermediate, h}, data: randn(p.intermediate*h, proj)},
			tensor{name: pre + "mlp.up_proj.weight", shape: []int{p.intermediate, h}, data: randn(p.intermediate*h, proj)},
			tensor{name: pre + "mlp.down_proj.weight", shape: []int{h, p.intermediate}, data: make([]float32, h*p.intermediate)},
		)
	}
	w.tensors = append(w.tensors,
		tensor{name: "model.norm.weight", shape: []int{h}, data: ones(h), f32: true},
		tensor{name: "lm_head.weight", shape: []int{vsize, h}, data: w.head})
	return w
}

// checkChain decodes greedily from the chain's start, through the whole
// cycle and back to w0, on the weights as written, and wants each step to
// win by a wide margin.
func (w weights) checkChain(vsize int, ch chain) error {
	want := append([]int{ch.entry}, ch.cycle...)
	want = append(want, ch.cycle[0])
	tok := ch.start
	h := w.hidden
	for step, next := range want {
		x := normed(w.embed[tok*h : (tok+1)*h])
		best, second, arg := math.Inf(-1), math.Inf(-1), -1
		for id := range vsize {
			row := w.head[id*h : (id+1)*h]
			var dot float64
			for i, v := range row {
				dot += float64(v) * x[i]
			}
			switch {
			case dot > best:
				second, best, arg = best, dot, id
			case dot > second:
				second = dot
			}
		}
		if arg != next || best-second < float64(h)/4 {
			return fmt.Errorf("chain step %d after token %d: argmax %d (logit %.1f, next best %.1f), want %d by a margin of %d; try another -seed",
				step, tok, arg, best, second, next, h/4)
		}
		tok = next
	}
	return nil
}

// normed is RMS normalisation without weights (the norms' weights are 1).
func normed(v []float32) []float64 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	rms := math.Sqrt(ss/float64(len(v)) + 1e-5)
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) / rms
	}
	return out
}

// bf16 rounds to the nearest bfloat16 (ties to even), kept as a float32.
func bf16(f float32) float32 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

func writeConfig(path string, p params, v vocab) error {
	cfg := map[string]any{
		"architectures":           []string{"LlamaForCausalLM"},
		"model_type":              "llama",
		"hidden_size":             p.hidden,
		"intermediate_size":       p.intermediate,
		"num_hidden_layers":       p.layers,
		"num_attention_heads":     p.heads,
		"num_key_value_heads":     p.heads,
		"head_dim":                p.hidden / p.heads,
		"max_position_embeddings": 8192,
		"rms_norm_eps":            1e-5,
		"rope_theta":              500000.0,
		"vocab_size":              v.size,
		"tie_word_embeddings":     false,
		"bos_token_id":            v.bos,
		"eos_token_id":            v.eos,
		"hidden_act":              "silu",
		"torch_dtype":             "bfloat16",
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// writeSafetensors writes the format: an 8-byte little-endian header
// length, the JSON header (name -> dtype, shape, data offsets), the data.
func writeSafetensors(path string, ts []tensor) error {
	type entry struct {
		Dtype   string `json:"dtype"`
		Shape   []int  `json:"shape"`
		Offsets [2]int `json:"data_offsets"`
	}
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	off := 0
	for _, t := range ts {
		size, dtype := 2*len(t.data), "BF16"
		if t.f32 {
			size, dtype = 4*len(t.data), "F32"
		}
		header[t.name] = entry{dtype, t.shape, [2]int{off, off + size}}
		off += size
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	buf := make([]byte, 0, 8+len(hb)+off)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(hb)))
	buf = append(buf, hb...)
	for _, t := range ts {
		for _, x := range t.data {
			if t.f32 {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
			} else {
				buf = binary.LittleEndian.AppendUint16(buf, uint16(math.Float32bits(x)>>16))
			}
		}
	}
	return os.WriteFile(path, buf, 0o644)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
