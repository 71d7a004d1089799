package sockets

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count websockets by subprotocol and how they closed. They are a
// prometheus.Collector of their three series.
type Metrics struct {
	open   *prometheus.GaugeVec
	opened *prometheus.CounterVec
	closes *prometheus.CounterVec
}

// NewMetrics makes the websockets' metrics, for a registry.
func NewMetrics() *Metrics {
	return &Metrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "websocket_connections_open", Help: "Websockets open on this instance, by subprotocol.",
		}, []string{"protocol"}),
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "websocket_connections_total", Help: "Websockets accepted, by subprotocol.",
		}, []string{"protocol"}),
		closes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "websocket_closes_total", Help: "Websockets closed, by close code: the first one sent or received, 1006 when the connection broke first.",
		}, []string{"code"}),
	}
}

func (m *Metrics) accepted(protocol string) {
	if m == nil {
		return
	}
	m.open.WithLabelValues(protocol).Inc()
	m.opened.WithLabelValues(protocol).Inc()
}

func (m *Metrics) closed(protocol string, code int) {
	if m == nil {
		return
	}
	// Counted before the gauge drops, so that whoever sees the gauge at zero
	// sees the close counted.
	m.closes.WithLabelValues(closeCodeLabel(code)).Inc()
	m.open.WithLabelValues(protocol).Dec()
}

// Describe is prometheus.Collector's.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.open.Describe(ch)
	m.opened.Describe(ch)
	m.closes.Describe(ch)
}

// Collect is prometheus.Collector's.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.open.Collect(ch)
	m.opened.Collect(ch)
	m.closes.Collect(ch)
}

// closeCodeLabel names a close code for a label: the standard codes and the
// application codes this server sends (44xx) as themselves, any other code a
// client picked as "other".
func closeCodeLabel(code int) string {
	if (code >= 1000 && code <= 1015) || (code >= 4400 && code <= 4499) {
		return strconv.Itoa(code)
	}
	return "other"
}
