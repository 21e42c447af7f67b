{{/*
Which writes of a VirtualIngress (VirtualHTTPRoute) the resolve and generate policies skip, in both engines: the
JMESPath precondition of the ClusterPolicy rules next to the CEL matchConditions of the generatingPolicy engine's
policies, so that the two say the same.
*/}}

{{/*
Which writes the resolve policies skip, in both engines: the status controller's report of its verdict. That update
changes only the Ready condition (and a route's parents), which the policies keep from the controller anyway, so
nothing resolution depends on changed; skipping it spares Kyverno a resolution (every selector against the Services of
the namespace) per report. Only a write that changes nothing else is skipped: the spec, the labels and the rest of
status must be as stored (the admission policy <fullname>-virtualingress-writes keeps the controller off the spec and
annotations), so that the controller's token cannot put a status.ingress (status.route) of its own making in front of
the generate policy. A repair (status.lastServiceEvent changed) resolves like any other write.
The ClusterPolicy engine reads the JMESPath as a precondition of each resolve rule (true: the write is a report), the
MutatingPolicies the CEL as matchConditions (true: the write is resolved). The JMESPath compares JSON text: after
each rule Kyverno puts the object back into request.object as decoded from the admission review (whole numbers as
integers) while request.oldObject holds floats, and JMESPath tells those apart, so that a plain comparison would skip
the first rule only and let the others append to a status that was not started afresh.
*/}}
{{- define "virtual-ingress.statusReportJMESPath" -}}
request.operation == 'UPDATE' && (request.userInfo.username || '') == vi_config.statusWriter
  && to_string([request.object.spec, request.object.metadata.labels || `{}`,
      merge(request.object.status || `{}`, {conditions: request.object.status.conditions[?type != 'Ready'] || `[]`, parents: `null`})])
    == to_string([request.oldObject.spec, request.oldObject.metadata.labels || `{}`,
      merge(request.oldObject.status || `{}`, {conditions: request.oldObject.status.conditions[?type != 'Ready'] || `[]`, parents: `null`})])
{{- end }}

{{- define "virtual-ingress.resolveMatchConditions" -}}
- name: not-a-status-report
  expression: >-
    request.operation != "UPDATE" || oldObject == null
    || request.userInfo.?username.orValue("") != {{ include "virtual-ingress.controllerUsername" . | quote }}
    || object.?spec.orValue({}) != oldObject.?spec.orValue({})
    || object.metadata.?labels.orValue({}) != oldObject.metadata.?labels.orValue({})
    || object.?status.orValue({}).transformMap(k, v, k != "conditions" && k != "parents", v)
      != oldObject.?status.orValue({}).transformMap(k, v, k != "conditions" && k != "parents", v)
    || object.?status.?conditions.orValue([]).filter(c, c.?type.orValue("") != "Ready")
      != oldObject.?status.?conditions.orValue([]).filter(c, c.?type.orValue("") != "Ready")
{{- end }}

{{/*
Which updates of a VirtualIngress (VirtualHTTPRoute) make a generation request, in both engines: those that change
what the generated object is made of (status.ingress or status.route, labels, annotations), and repairs (the status
controller changes status.lastServiceEvent and nothing else, so status.serviceEvent stays). Everything else generates
nothing:
- the status controller's report of its verdict (the Ready condition): otherwise one request per report, and each
  request makes Kyverno's background controller read every object of the kind in the namespace;
- a Service event that did not change status.ingress (a Service deleted while its Ingress is kept, or an event that
  changed nothing): in a burst of Service recreations that halves the requests competing for Kyverno's queue
  (updateRequestThreshold);
- a client's update that leaves all of that as it was.
An Ingress that diverged anyway is the status controller's to repair. Creations always generate, and so do Kyverno's
background re-evaluations (no stored object to compare with).
The ClusterPolicy engine reads this as a precondition, which may not name request.userInfo in a background rule and
makes Kyverno check the stored object too when it turns false: unchanged as well, so the rule is skipped and nothing
is deleted. The GeneratingPolicy reads it as matchConditions. Call with (dict "status" "ingress") (or "route").
The status field is compared as JSON text: when the preconditions turn false Kyverno puts the stored object in
request.object as decoded from the API (whole numbers as integers) while request.oldObject holds the same object
decoded from the admission review (numbers as floats), and JMESPath tells those apart: a port number would make every
skipped update delete the Ingress.
*/}}
{{- define "virtual-ingress.generateUpdatesJMESPath" -}}
{{- $s := printf "status.%s" .status -}}
{{ "{{" }} request.operation != 'UPDATE'
  || to_string(request.object.{{ $s }}) != to_string(request.oldObject.{{ $s }})
  || request.object.metadata.labels != request.oldObject.metadata.labels
  || request.object.metadata.annotations != request.oldObject.metadata.annotations
  || ((request.object.status.lastServiceEvent || '') != (request.oldObject.status.lastServiceEvent || '')
    && request.object.status.serviceEvent == request.oldObject.status.serviceEvent) {{ "}}" }}
{{- end }}

{{- define "virtual-ingress.generateMatchConditions" -}}
- name: changes-the-generated-object
  expression: >-
    request.operation != "UPDATE" || oldObject == null
    || object.?status.?{{ .status }}.orValue({}) != oldObject.?status.?{{ .status }}.orValue({})
    || object.metadata.?labels.orValue({}) != oldObject.metadata.?labels.orValue({})
    || object.metadata.?annotations.orValue({}) != oldObject.metadata.?annotations.orValue({})
    || (object.?status.?lastServiceEvent.orValue("") != oldObject.?status.?lastServiceEvent.orValue("")
      && object.?status.?serviceEvent.orValue({}) == oldObject.?status.?serviceEvent.orValue({}))
{{- end }}
