package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/engine"
)

// detectTimeout bounds DetectModel when the caller passes no client.
const detectTimeout = 30 * time.Second

// Model is one entry of GET {base}/models.
type Model struct {
	ID      string
	OwnedBy string
}

// DetectModel returns the id of the model the engine serves at
// GET {base}/models, where base is engine.NormalizeURL(baseURL). An engine that
// lists more than one is an error naming them: which one to benchmark is
// the user's choice (--model). apiKey "" sends DefaultAPIKey; client nil
// uses a client with a 30 s timeout. The error messages are the
// original's:
//
//	Failed to fetch models from {base}/models: {cause}
//	No models returned by {base}/models; pass --model explicitly.
func DetectModel(ctx context.Context, baseURL, apiKey string, client *http.Client) (string, error) {
	models, err := ListModels(ctx, baseURL, apiKey, client)
	if err != nil {
		return "", err
	}
	if len(models) > 1 {
		e := &ManyModelsError{}
		for _, m := range models {
			e.IDs = append(e.IDs, m.ID)
		}
		return "", e
	}
	return models[0].ID, nil
}

// ManyModelsError is DetectModel's answer for an engine serving several
// models: which one to benchmark is the user's choice.
type ManyModelsError struct{ IDs []string }

func (e *ManyModelsError) Error() string {
	return fmt.Sprintf("the engine serves %d models (%s); pass --model with one of them", len(e.IDs), strings.Join(e.IDs, ", "))
}

// ListModels returns the models the engine lists at GET {base}/models, in
// its order; none is an error.
func ListModels(ctx context.Context, baseURL, apiKey string, client *http.Client) ([]Model, error) {
	modelsURL := engine.NormalizeURL(baseURL) + "/models"
	if apiKey == "" {
		apiKey = engine.DefaultAPIKey
	}
	if client == nil {
		client = &http.Client{Timeout: detectTimeout}
	}
	models, err := fetchModels(ctx, modelsURL, apiKey, client)
	// Both texts are the original's, capital letter and full stop included;
	// a password in the URL is not repeated.
	if errors.Is(err, errNoModels) {
		return nil, fmt.Errorf("No models returned by %s; pass --model explicitly.", redactedURL(modelsURL))
	}
	if err != nil {
		return nil, fmt.Errorf("Failed to fetch models from %s: %w", redactedURL(modelsURL), err)
	}
	return models, nil
}

var errNoModels = errors.New("no models")

func fetchModels(ctx context.Context, modelsURL, apiKey string, client *http.Client) ([]Model, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, modelsURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is already in DetectModel's message
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errors.New(redactKey(statusText(resp), apiKey))
	}
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("decoding the model list: %w", err)
	}
	if len(list.Data) == 0 {
		return nil, errNoModels
	}
	out := make([]Model, 0, len(list.Data))
	for i, m := range list.Data {
		if m.ID == "" {
			if i == 0 {
				return nil, errors.New(`the first listed model has no "id"`)
			}
			return nil, fmt.Errorf(`listed model %d has no "id"`, i+1)
		}
		out = append(out, Model{ID: m.ID, OwnedBy: m.OwnedBy})
	}
	return out, nil
}

// redactedURL is s with the password of its user information, if any,
// replaced by "xxxxx".
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	return u.Redacted()
}

// redactKey is msg without the API key.
func redactKey(msg, key string) string {
	if key == "" {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[REDACTED]")
}

// statusText is a non-2xx answer as "HTTP <code>: <body excerpt>".
func statusText(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if msg := strings.TrimSpace(string(b)); msg != "" {
		return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg)
	}
	return fmt.Sprintf("HTTP %d", resp.StatusCode)
}
