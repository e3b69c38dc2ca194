package sim

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/lmbench/lmbench/core/sim/prefixcache"
	"github.com/lmbench/lmbench/core/sim/tokenizer"
)

// status is GET /status in the shape of LMCache's MP server
// (MPCacheServer.report_status), so that `lmbench run --lmcache-url` (and
// the original tool) derive tokens per GB from it:
// 2^30 / (cache_size_per_token × world_size) = Config.TokensPerGB.
type status struct {
	IsHealthy        bool                   `json:"is_healthy"`
	EngineType       string                 `json:"engine_type"`
	ChunkSize        int                    `json:"chunk_size"`
	HashAlgorithm    string                 `json:"hash_algorithm"`
	ActiveSessions   int64                  `json:"active_sessions"`
	RegisteredGPUIDs []int                  `json:"registered_gpu_ids"`
	CacheContextMeta map[string]contextMeta `json:"cache_context_meta"`
	StorageManager   storageManager         `json:"storage_manager"`
}

type contextMeta struct {
	ModelName     string        `json:"model_name"`
	WorldSize     int           `json:"world_size"`
	KVCacheLayout kvCacheLayout `json:"kv_cache_layout"`
}

type kvCacheLayout struct {
	NumLayers         int   `json:"num_layers"`
	NumBlocks         int   `json:"num_blocks"`
	BlockSize         int   `json:"block_size"`
	CacheSizePerToken int64 `json:"cache_size_per_token"`
}

type storageManager struct {
	Blend          bool         `json:"blend"`
	BlendRecompute float64      `json:"blend_recompute"`
	Tiers          []tierStatus `json:"tiers"`
}

type tierStatus struct {
	Name           string `json:"name"`
	CapacityTokens int64  `json:"capacity_tokens"`
	UsedTokens     int64  `json:"used_tokens"`
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	tiers := s.engine.cache.Snapshot()
	bs := int64(s.cfg.BlockSize)
	sm := storageManager{Blend: s.cfg.Blend, BlendRecompute: s.cfg.BlendRecompute}
	for _, t := range tiers {
		sm.Tiers = append(sm.Tiers, tierStatus{Name: t.Name, CapacityTokens: int64(t.CapacityBlocks) * bs,
			UsedTokens: int64(t.UsedBlocks) * bs})
	}
	writeJSON(w, http.StatusOK, status{
		IsHealthy: true, EngineType: "lmbench-sim", ChunkSize: s.cfg.BlockSize, HashAlgorithm: "fnv64a-chained",
		ActiveSessions: s.engine.stats.running.Load(), RegisteredGPUIDs: []int{0},
		CacheContextMeta: map[string]contextMeta{"0": {
			ModelName: s.cfg.Model, WorldSize: s.cfg.WorldSize,
			KVCacheLayout: kvCacheLayout{NumLayers: 32, NumBlocks: tiers[prefixcache.GPU].CapacityBlocks, BlockSize: s.cfg.BlockSize,
				CacheSizePerToken: s.cfg.CacheSizePerToken()},
		}},
		StorageManager: sm,
	})
}

// handleReset is POST /reset_prefix_cache. As in vLLM it empties the GPU
// tier (vLLM's prefix cache); ?tiers=all empties the CPU and disk tiers
// too, so the next request is a cold prefill. Counters are kept. With
// Faults.ResetNoop it answers 200 and clears nothing: a reset that did not
// take, for the tools that check one.
func (s *Server) handleReset(w http.ResponseWriter, r *http.Request) {
	tiers := []prefixcache.Tier{prefixcache.GPU}
	switch v := r.URL.Query().Get("tiers"); v {
	case "", "gpu":
	case "all":
		tiers = []prefixcache.Tier{prefixcache.GPU, prefixcache.CPU, prefixcache.Disk}
	default:
		writeError(w, badRequest("tiers: expected gpu or all, got %q", v))
		return
	}
	if !s.cfg.Faults.ResetNoop {
		s.engine.cache.Reset(tiers...)
	}
	s.engine.stats.resets.Add(1)
	w.WriteHeader(http.StatusOK)
}

// vocab gives words token ids, for /tokenize and /detokenize: the output
// vocabulary first, then every word in the order /tokenize first sees it.
type vocab struct {
	mu    sync.Mutex
	ids   map[string]int
	words []string
}

// maxVocab bounds the words /tokenize remembers.
const maxVocab = 1 << 22

func newVocab() *vocab {
	v := &vocab{ids: make(map[string]int)}
	for _, w := range vocabulary {
		v.id(w)
	}
	return v
}

func (v *vocab) id(word string) int {
	if id, ok := v.ids[word]; ok {
		return id
	}
	if len(v.words) >= maxVocab {
		return -1
	}
	id := len(v.words)
	v.ids[word] = id
	v.words = append(v.words, word)
	return id
}

type tokenizeRequest struct {
	Model           string              `json:"model"`
	Prompt          *string             `json:"prompt"`
	Messages        []tokenizer.Message `json:"messages"`
	Tools           []tokenizer.Tool    `json:"tools"` // rendered with messages, as vLLM's /tokenize does
	ReturnTokenStrs bool                `json:"return_token_strs"`
	// AddSpecialTokens (default true for a prompt, false for messages, as
	// in vLLM) adds the BOS token; AddGenerationPrompt (default true) the
	// assistant header. Both only matter with the subword tokenizer.
	AddSpecialTokens    *bool `json:"add_special_tokens"`
	AddGenerationPrompt *bool `json:"add_generation_prompt"`
}

type tokenizeResponse struct {
	Count       int      `json:"count"`
	MaxModelLen int      `json:"max_model_len"`
	Tokens      []int    `json:"tokens"`
	TokenStrs   []string `json:"token_strs"`
}

// handleTokenize is POST /tokenize, with vLLM's request and response
// shapes: a prompt or chat messages in, the token ids out. Ids are
// assigned to words as they are first seen.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var req tokenizeRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkModel(req.Model); err != nil {
		writeError(w, err)
		return
	}
	var words []string
	switch {
	case req.Prompt != nil && req.Messages != nil:
		writeError(w, badRequest("give either prompt or messages, not both"))
		return
	case req.Prompt != nil:
		words = s.tok.Text(*req.Prompt, req.AddSpecialTokens == nil || *req.AddSpecialTokens)
	case req.Messages != nil:
		var err error
		if words, err = s.tok.Chat(req.Messages, req.Tools, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt); err != nil {
			writeError(w, badRequest("%v", err))
			return
		}
	default:
		writeError(w, badRequest("prompt or messages: required"))
		return
	}
	ids := make([]int, len(words))
	s.vocab.mu.Lock()
	for i, word := range words {
		ids[i] = s.vocab.id(word)
	}
	s.vocab.mu.Unlock()
	if containsNegative(ids) {
		writeError(w, &apiError{status: http.StatusServiceUnavailable,
			message: fmt.Sprintf("the simulated tokenizer remembers at most %d distinct words", maxVocab)})
		return
	}
	resp := tokenizeResponse{Count: len(ids), MaxModelLen: s.cfg.MaxModelLen, Tokens: ids}
	if req.ReturnTokenStrs {
		resp.TokenStrs = words
	}
	writeJSON(w, http.StatusOK, resp)
}

func containsNegative(ids []int) bool {
	for _, id := range ids {
		if id < 0 {
			return true
		}
	}
	return false
}

type detokenizeRequest struct {
	Model  string `json:"model"`
	Tokens []int  `json:"tokens"`
}

type detokenizeResponse struct {
	Prompt string `json:"prompt"`
}

// handleDetokenize is POST /detokenize: token ids back to text (words
// joined by single spaces). Only ids /tokenize gave out (or output words) are known.
func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request) {
	var req detokenizeRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkModel(req.Model); err != nil {
		writeError(w, err)
		return
	}
	if req.Tokens == nil {
		writeError(w, badRequest("tokens: required"))
		return
	}
	words := make([]string, len(req.Tokens))
	s.vocab.mu.Lock()
	n := len(s.vocab.words)
	for i, id := range req.Tokens {
		if id < 0 || id >= n {
			s.vocab.mu.Unlock()
			writeError(w, badRequest("tokens[%d]: unknown token id %d (ids come from /tokenize; %d are known)", i, id, n))
			return
		}
		words[i] = s.vocab.words[id]
	}
	s.vocab.mu.Unlock()
	writeJSON(w, http.StatusOK, detokenizeResponse{Prompt: s.tok.Detokenize(words)})
}
