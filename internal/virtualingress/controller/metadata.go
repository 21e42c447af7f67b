package controller

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nameHashLabel is set on every source by the resolve policies and never copied: both engines add it to the
// excluded labels.
const nameHashLabel = "virtual-ingress.io/name-hash"

// copied tells which of a source's labels and annotations the generate policies copy to the generated object: all but
// the chart's generatedIngress.excludedLabels / excludedAnnotations.
type copied struct {
	excludedLabels, excludedAnnotations map[string]bool
}

func newCopied(excludedLabels, excludedAnnotations []string) copied {
	c := copied{excludedLabels: map[string]bool{nameHashLabel: true}, excludedAnnotations: map[string]bool{}}
	for _, k := range excludedLabels {
		c.excludedLabels[k] = true
	}
	for _, k := range excludedAnnotations {
		c.excludedAnnotations[k] = true
	}
	return c
}

// kyvernoLabel: Kyverno sets these on every object it generates, over whatever the source carries.
func kyvernoLabel(key string) bool {
	return key == "app.kubernetes.io/managed-by" || strings.HasPrefix(key, "generate.kyverno.io/")
}

// lag describes the first label or annotation of source that generated disagrees with ("" when none): one the
// policies copy that it lacks or holds with another value (an edit not generated yet, or a key no longer excluded), or
// an excluded one it still holds with the source's value (excluded after it was generated: Kyverno re-generates every
// object when the policy changes, but may miss some). Keys only the generated object has are not compared: others
// may add theirs, and a key removed from the source cannot be told from those.
func (c copied) lag(source, generated metav1.Object, backReferenceLabel string) string {
	if msg := lagOf("label", source.GetLabels(), generated.GetLabels(), c.excludedLabels, func(k string) bool {
		return k == backReferenceLabel || kyvernoLabel(k)
	}); msg != "" {
		return msg
	}
	return lagOf("annotation", source.GetAnnotations(), generated.GetAnnotations(), c.excludedAnnotations,
		func(string) bool { return false })
}

// lagOf is lag for one of the two maps.
func lagOf(what string, source, generated map[string]string, excluded map[string]bool, skip func(string) bool) string {
	keys := make([]string, 0, len(source))
	for k := range source {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if skip(k) {
			continue
		}
		want := source[k]
		got, has := generated[k]
		switch {
		case excluded[k] && has && got == want:
			return fmt.Sprintf("%s %s is excluded but still copied", what, k)
		case !excluded[k] && !has:
			return fmt.Sprintf("%s %s is not copied yet", what, k)
		case !excluded[k] && got != want:
			return fmt.Sprintf("%s %s has another value", what, k)
		}
	}
	return ""
}
