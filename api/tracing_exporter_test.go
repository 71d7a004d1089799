package api

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"feedservice/internal/testenv"
)

// TestTraceExporterProtocol: the standard protocol variables choose the
// transport, the traces' own over the general one; one the SDK cannot
// speak stops the start with a clear error instead of sending protobuf.
func TestTraceExporterProtocol(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "http/protobuf"},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc"},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "http/protobuf"},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "http/protobuf"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "grpc"},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "udp"}, ""},
	} {
		got, err := traceExporter(func(k string) string { return c.env[k] })
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%v: %q, %v; want %q", c.env, got, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "http/protobuf or grpc") {
			t.Errorf("%v: the error does not name what works: %v", c.env, err)
		}
	}
}

// grpcTraces is an OTLP/gRPC trace receiver that counts the spans sent.
type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (g *grpcTraces) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				g.names = append(g.names, s.GetName())
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestTracingOverGRPC: with OTEL_EXPORTER_OTLP_PROTOCOL=grpc the spans
// reach an OTLP/gRPC receiver.
func TestTracingOverGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, recv := grpc.NewServer(), &grpcTraces{}
	coltracepb.RegisterTraceServiceServer(srv, recv)
	go srv.Serve(lis)
	defer srv.Stop()

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	ctx := context.Background()
	tp, err := startTracing(ctx)
	if err != nil || tp == nil {
		t.Fatalf("startTracing: %v, %v", tp, err)
	}
	_, span := tp.Tracer("test").Start(ctx, "over grpc")
	span.End()
	sctx, cancel := context.WithTimeout(ctx, testenv.Scale(10*time.Second))
	defer cancel()
	if err := tp.Shutdown(sctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.names) != 1 || recv.names[0] != "over grpc" {
		t.Fatalf("the gRPC receiver got spans %q, want [over grpc]", recv.names)
	}
}
