#!/usr/bin/env python3
"""Writes tokenizer.json: a tiny byte-level BPE in the Hugging Face format,
pre-tokenized like Llama 3 (a Split whose pattern needs look-ahead, then
ByteLevel without its own regex), and tokenizer_config.json with Qwen 2's
ChatML chat template. Deterministic: run it to regenerate.

Merges give one token to "the", " the", " a", "hello", " world" and "hi"
(but not " hi"), so "the" and "a" are the only one-token filler words of
the workloads' candidates."""
import json


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


b2u = bytes_to_unicode()
vocab = {b2u[b]: b for b in range(256)}
merges = ["Ġ t", "h e", "t he", "Ġt he", "Ġ a", "l l", "he ll", "hell o",
          "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d", "h i"]
for m in merges:
    vocab["".join(m.split(" "))] = len(vocab)
llama3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
doc = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [{"id": len(vocab) + i, "content": t, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True}
                     for i, t in enumerate(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])],
    "normalizer": None,
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": llama3}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ]},
    "post_processor": None,
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
              "vocab": vocab, "merges": merges},
}
with open("tokenizer.json", "w", encoding="utf-8") as f:
    json.dump(doc, f, ensure_ascii=False, indent=1, sort_keys=True)
    f.write("\n")

chatml = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
with open("tokenizer_config.json", "w", encoding="utf-8") as f:
    json.dump({"bos_token": None, "eos_token": "<|im_end|>", "chat_template": chatml}, f, indent=1, sort_keys=True)
    f.write("\n")
