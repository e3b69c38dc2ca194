package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// detectTimeout bounds DetectModel when the caller passes no client.
const detectTimeout = 30 * time.Second

// DetectModel returns the id of the first model the engine lists at
// GET {base}/models, where base is NormalizeURL(baseURL). apiKey "" sends
// DefaultAPIKey; client nil uses a client with a 30 s timeout. The error
// messages are the original's:
//
//	Failed to fetch models from {base}/models: {cause}
//	No models returned by {base}/models; pass --model explicitly.
func DetectModel(ctx context.Context, baseURL, apiKey string, client *http.Client) (string, error) {
	modelsURL := NormalizeURL(baseURL) + "/models"
	if apiKey == "" {
		apiKey = DefaultAPIKey
	}
	if client == nil {
		client = &http.Client{Timeout: detectTimeout}
	}
	id, err := fetchFirstModel(ctx, modelsURL, apiKey, client)
	// Both texts are the original's, capital letter and full stop included;
	// a password in the URL is not repeated.
	if errors.Is(err, errNoModels) {
		return "", fmt.Errorf("No models returned by %s; pass --model explicitly.", redactedURL(modelsURL))
	}
	if err != nil {
		return "", fmt.Errorf("Failed to fetch models from %s: %w", redactedURL(modelsURL), err)
	}
	return id, nil
}

var errNoModels = errors.New("no models")

func fetchFirstModel(ctx context.Context, modelsURL, apiKey string, client *http.Client) (string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, modelsURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is already in DetectModel's message
		}
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", errors.New(redact(statusError(resp), apiKey))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&list); err != nil {
		return "", fmt.Errorf("decoding the model list: %w", err)
	}
	if len(list.Data) == 0 {
		return "", errNoModels
	}
	if list.Data[0].ID == "" {
		return "", errors.New(`the first listed model has no "id"`)
	}
	return list.Data[0].ID, nil
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
