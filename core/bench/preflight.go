package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/abort"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
)

// modelsTimeout bounds the pre-flight GET /v1/models.
const modelsTimeout = 10 * time.Second

// listModels returns the ids GET {base}/models lists; an engine that
// lists none, or cannot be asked, gives an error.
func listModels(ctx context.Context, base, apiKey string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/models", nil)
	if err != nil {
		return nil, err
	}
	if apiKey == "" {
		apiKey = engine.DefaultAPIKey // as every request sends
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("decoding the model list: %w", err)
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// checkServedModel fails before the run when the engine lists its models
// and the one lmbench would send is not among them: every request would
// fail. An engine that lists none (or cannot say) is not checked.
func checkServedModel(ctx context.Context, base, apiKey, model, origin string, log zerolog.Logger) error {
	ids, err := listModels(ctx, base, apiKey)
	if err != nil {
		log.Debug().Str("error", abort.RedactKey(err.Error(), apiKey)).Msg("the engine did not list its models: the model name is not checked")
		return nil
	}
	if len(ids) == 0 || slices.Contains(ids, model) {
		return nil
	}
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = strconv.Quote(id)
	}
	return fmt.Errorf("%s %q: the engine serves only %s (GET %s/models)",
		origin, model, strings.Join(quoted, ", "), config.RedactURL(strings.TrimSuffix(base, "/")))
}
