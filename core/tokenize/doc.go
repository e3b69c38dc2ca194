// Package tokenize counts prompt tokens as the engine's tokenizer does,
// for a workload with the tokenizer capability (--tokenizer): through the
// engine's POST /tokenize (vLLM's shape), batched and cached; or with a
// local Hugging Face tokenizer.json (read by core/hftok, exact to the
// tokenizers crate) and the chat template beside it (chat_template.jinja
// or the tokenizer_config.json's chat_template, by ardanlabs/jinja).
//
// [Check] vets a --tokenizer value before any network traffic; [Resolve]
// picks the counter for a run and names it for the banner:
//
//	tok, name, err := tokenize.Resolve(ctx, "auto", "--tokenizer", baseURL, apiKey, model, log)
//	counts, err := tok.CountTokens(ctx, protocol.TokenQuery{Texts: []string{"hello"}})
//
// A nil counter (name [Words]) means lengths are in whitespace words.
package tokenize
