package main

import (
	"testing"
)

func TestMetricLabelsReadsEachLabelWhateverItsNeighbours(t *testing.T) {
	l := metricLabels(`code="201",component="apiserver",group="kyverno.io",resource="updaterequests",scope="namespace",subresource="status",verb="PUT",version="v2"} 12`)
	if l["resource"] != "updaterequests" || l["subresource"] != "status" || l["verb"] != "PUT" {
		t.Fatalf("labels = %v", l)
	}
	if l := metricLabels(`resource="",verb="GET"} 1`); l["resource"] != "" || l["verb"] != "GET" {
		t.Fatalf("labels with an empty value = %v", l)
	}
}

// A scale run's usage: CPU as the difference of two readings, except for a process restarted in between (a new PID),
// which counts from its restart; requests per trigger, most frequent first, at most topRequests of them.
func TestUsageSinceCountsRestartsFromTheRestartAndRanksRequests(t *testing.T) {
	before := usageSnapshot{
		pids:     map[string]int{"kube-apiserver": 10, "kyverno-admission": 20},
		cpu:      map[string]float64{"kube-apiserver": 100, "kyverno-admission": 50},
		requests: map[string]float64{"GET ingresses": 10, "POST virtualingresses": 0},
	}
	after := usageSnapshot{
		pids:     map[string]int{"kube-apiserver": 10, "kyverno-admission": 21},
		cpu:      map[string]float64{"kube-apiserver": 160, "kyverno-admission": 7},
		requests: map[string]float64{"GET ingresses": 30, "POST virtualingresses": 10, "LIST services": 5},
	}
	for i := range topRequests + 2 {
		after.requests[string(rune('a'+i))+" other"] = 1
	}
	u := after.since(before, 10)
	if u.CPUSeconds["kube-apiserver"] != 60 || u.CPUSeconds["kyverno-admission"] != 7 {
		t.Fatalf("CPU seconds = %v, want 60 for the API server and 7 for the restarted admission controller", u.CPUSeconds)
	}
	if len(u.Requests) != topRequests {
		t.Fatalf("%d requests listed, want %d", len(u.Requests), topRequests)
	}
	if u.Requests[0] != (requestCount{"GET ingresses", 2}) || u.Requests[1] != (requestCount{"POST virtualingresses", 1}) {
		t.Fatalf("most frequent requests = %v", u.Requests[:2])
	}
	if want := (20.0 + 10 + 5 + topRequests + 2) / 10; u.RequestsPerTrigger != want {
		t.Fatalf("requests per trigger = %v, want %v", u.RequestsPerTrigger, want)
	}
}
