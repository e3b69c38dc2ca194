// Package hftok reads a Hugging Face tokenizer.json and encodes texts
// with it exactly as Hugging Face's tokenizers crate (the code vLLM and
// SGLang run) does, for the BPE tokenizers of the common model families
// (Llama 2 and 3, Qwen, Gemma, Mistral, DeepSeek, GPT-OSS):
//
//   - added tokens, special or not, found leftmost-longest in the raw
//     text (normalized false) or in the normalized text (normalized
//     true), with lstrip, rstrip and single_word;
//   - normalizers NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip,
//     Prepend, Replace and Sequence;
//   - pre-tokenizers Split (regexes through dlclark/regexp2, which has
//     the look-ahead of GPT-2's and Llama 3's patterns), ByteLevel,
//     Metaspace, Digits, Whitespace, WhitespaceSplit and Sequence;
//   - BPE with merges in rank order, leftmost first on equal ranks,
//     ignore_merges, byte_fallback (<0xNN>), unk_token with fuse_unk,
//     continuing_subword_prefix and end_of_word_suffix; a word of n
//     characters costs O(n log n), and words are cached.
//
// Encoding adds no special tokens (add_special_tokens=False): a
// post-processor's BOS is left to the chat template, which writes it.
// Other model types (WordPiece, Unigram, WordLevel) are refused with an
// error naming the type.
//
//	tk, err := hftok.Load("tokenizer.json")
//	n, err := tk.Count("Hello world")
//
// The tests compare every id with Hugging Face's on ten thousand texts
// per family (testdata/goldens; the tokenizer files are installed by
// scripts/tokenizer-fixtures.sh).
package hftok
