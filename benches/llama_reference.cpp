// Plain llama.cpp timed over llama_decode: the reference `scripts/bench-llm.sh --reference` puts beside
// `sum2act llm bench --quick`. Prefill of N_PROMPT tokens (the prompt file's tokens, repeated as needed,
// in N_BATCH chunks) into an empty cache; then, after a fresh N_DECODE_PROMPT-token prompt, greedy
// decoding of N_GEN tokens, one token per llama_decode. Each timed 3 times, the best counts. Prints one
// JSON line.
//   llama_reference MODEL PROMPT_FILE N_PROMPT N_GEN THREADS N_BATCH N_UBATCH N_DECODE_PROMPT
#include "llama.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

static void quiet(ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    if (argc != 9) { fprintf(stderr, "usage: %s MODEL PROMPT_FILE N_PROMPT N_GEN THREADS N_BATCH N_UBATCH N_DECODE_PROMPT\n", argv[0]); return 2; }
    const int n_prompt = atoi(argv[3]), n_gen = atoi(argv[4]), threads = atoi(argv[5]);
    const int n_batch = atoi(argv[6]), n_ubatch = atoi(argv[7]), n_ctx_gen = atoi(argv[8]);
    if (n_prompt < 1 || n_gen < 1 || threads < 1 || n_batch < 1 || n_ubatch < 1 || n_ctx_gen < 1 || n_ctx_gen > n_prompt) { fprintf(stderr, "bad numbers\n"); return 2; }
    std::ifstream in(argv[2]); std::stringstream text; text << in.rdbuf();
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 8192; cp.n_batch = n_batch; cp.n_ubatch = n_ubatch;
    cp.n_threads = threads; cp.n_threads_batch = threads;
    llama_context * ctx = llama_init_from_model(model, cp);
    const std::string s = text.str();
    std::vector<llama_token> src(s.size() + 16);
    const int n_src = llama_tokenize(vocab, s.c_str(), s.size(), src.data(), src.size(), true, true);
    if (n_src <= 0 || !ctx) { fprintf(stderr, "cannot tokenize the prompt or create a context\n"); return 1; }
    std::vector<llama_token> prompt(n_prompt);
    for (int i = 0; i < n_prompt; i++) prompt[i] = src[i % n_src];
    llama_token warm = prompt[0];  // page the weights in
    llama_decode(ctx, llama_batch_get_one(&warm, 1));
    const int n_vocab = llama_vocab_n_tokens(vocab);
    double prefill_ms = 1e300, decode_ms = 1e300;
    for (int run = 0; run < 3; run++) {  // the best of 3: other processes can only slow a run down
        llama_memory_clear(llama_get_memory(ctx), true);
        double t0 = now_ms();
        for (int i = 0; i < n_prompt; i += n_batch) {
            const int n = std::min(n_batch, n_prompt - i);
            if (llama_decode(ctx, llama_batch_get_one(prompt.data() + i, n))) { fprintf(stderr, "decode failed\n"); return 1; }
        }
        prefill_ms = std::min(prefill_ms, now_ms() - t0);
        llama_memory_clear(llama_get_memory(ctx), true);
        if (llama_decode(ctx, llama_batch_get_one(prompt.data(), n_ctx_gen))) { fprintf(stderr, "decode failed\n"); return 1; }
        llama_token tok = 0;
        t0 = now_ms();
        for (int g = 0; g < n_gen; g++) {
            const float * logits = llama_get_logits_ith(ctx, -1);
            tok = 0;
            for (int v = 1; v < n_vocab; v++) if (logits[v] > logits[tok]) tok = v;
            if (llama_decode(ctx, llama_batch_get_one(&tok, 1))) { fprintf(stderr, "decode failed\n"); return 1; }
        }
        decode_ms = std::min(decode_ms, now_ms() - t0);
    }
    printf("{\"prompt_tokens\":%d,\"decode_prompt_tokens\":%d,\"generated_tokens\":%d,\"threads\":%d,\"prefill_tok_s\":%.2f,\"decode_tok_s\":%.2f,\"system_info\":\"%s\"}\n",
           n_prompt, n_ctx_gen, n_gen, threads, n_prompt * 1000.0 / prefill_ms, n_gen * 1000.0 / decode_ms, llama_print_system_info());
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
