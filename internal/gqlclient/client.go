// Package gqlclient speaks GraphQL to the service as its clients do: POST
// /query over HTTP, and subscriptions over websockets
// (graphql-transport-ws). The tests, the benchmark and the soak share it.
package gqlclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Error is one error of a GraphQL response.
type Error struct {
	Message    string         `json:"message"`
	Locations  []Location     `json:"locations"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Location is where in the document an error is, 1-based.
type Location struct{ Line, Column int }

// Code is the error's extensions.code, or "".
func (e Error) Code() string {
	code, _ := e.Extensions["code"].(string)
	return code
}

// Response is a GraphQL response with its HTTP status.
type Response struct {
	Status int             `json:"-"`
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
}

// Code is the extensions.code of the first error, or "" when there is none.
func (r Response) Code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	return r.Errors[0].Code()
}

// Err is nil for a response with status 200 and no errors, and otherwise
// says what the server answered.
func (r Response) Err() error {
	if r.Status == http.StatusOK && len(r.Errors) == 0 {
		return nil
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("graphql: status %d: %s (%s)", r.Status, r.Errors[0].Message, r.Code())
	}
	return fmt.Errorf("graphql: status %d", r.Status)
}

// Client posts GraphQL documents to one server.
type Client struct {
	URL  string       // the server, as http://host:port
	HTTP *http.Client // http.DefaultClient when nil
	// Header is sent with every request, besides the token.
	Header http.Header
}

// New is a client of the server at url (http://host:port) over hc (nil
// for http.DefaultClient).
func New(url string, hc *http.Client) *Client { return &Client{URL: url, HTTP: hc} }

// Post sends query with vars as token ("" when signed out) and returns the
// response, whatever it holds. A transport failure, or a body that is not
// JSON, is an error.
func (c *Client) Post(ctx context.Context, token, query string, vars map[string]any) (Response, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return Response{}, err
	}
	return c.PostBody(ctx, token, bytes.NewReader(body))
}

// PostBody sends body, a request of the caller's making, as token.
func (c *Client) PostBody(ctx context.Context, token string, body io.Reader) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/query", body)
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, err
	}
	r := Response{Status: res.StatusCode}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("response is not JSON (status %d): %.200s", res.StatusCode, raw)
	}
	return r, nil
}

// Do sends a document that must succeed (status 200, no errors) and decodes
// its data into out (unless nil).
func (c *Client) Do(ctx context.Context, token, query string, vars map[string]any, out any) error {
	r, err := c.Post(ctx, token, query, vars)
	if err != nil {
		return err
	}
	if err := r.Err(); err != nil {
		return err
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}
