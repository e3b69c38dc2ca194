// Package tokenize counts prompt tokens as the engine's tokenizer does,
// for a workload with the tokenizer capability (--tokenizer): through the
// engine's tokenizer endpoint in the shape its profile names (vLLM's and
// SGLang's /tokenize, llama.cpp's /tokenize and /apply-template, TGI's
// /tokenize and /chat_tokenize: shapes.go), batched and cached; or with a
// local Hugging Face tokenizer.json (read by core/hftok, exact to the
// tokenizers crate) and the chat template beside it (chat_template.jinja
// or the tokenizer_config.json's chat_template, by ardanlabs/jinja).
//
// [Check] vets a --tokenizer value before any network traffic; [Resolve]
// picks the counter for a run and names it for the banner:
//
//	tok, name, err := tokenize.Resolve(ctx, "auto", "--tokenizer", tokenize.Target{Base: baseURL, APIKey: apiKey, Model: model}, log)
//	counts, err := tok.CountTokens(ctx, protocol.TokenQuery{Texts: []string{"hello"}})
//
// A nil counter (name [Words]) means lengths are in whitespace words.
package tokenize
