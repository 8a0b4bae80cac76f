{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "zdmatch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name; the release name alone when it already contains the chart name. */}}
{{- define "zdmatch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "zdmatch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "zdmatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The image tag as a label value, which Kubernetes takes only up to 63
characters of letters, digits, "-", "_" and "." that begin and end with a
letter or digit: a tag pinned to a digest (1.4.0@sha256:…) keeps its tag part,
and a longer tag (up to 128 characters) is cut, so every object stays valid.
*/}}
{{- define "zdmatch.versionLabel" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString }}
{{- $tag = regexReplaceAll "@.*$" $tag "" }}
{{- regexReplaceAll "[^A-Za-z0-9._-]" $tag "_" | trunc 63 | trimAll "_.-" }}
{{- end }}

{{/*
A Service named after the release with a suffix (metrics, peers): a Service
name is a DNS label of at most 63 characters, so the release's part is cut to
leave room for the suffix. Call with (dict "root" $ "suffix" "metrics").
*/}}
{{- define "zdmatch.serviceName" -}}
{{- $room := int (sub 62 (len .suffix)) }}
{{- printf "%s-%s" (include "zdmatch.fullname" .root | trunc $room | trimSuffix "-") .suffix }}
{{- end }}

{{/* part-of is fixed: the ServiceMonitor's jobLabel, so every target gets job="zdmatch" (the alert rules select it). */}}
{{- define "zdmatch.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "zdmatch.selectorLabels" . }}
app.kubernetes.io/version: {{ include "zdmatch.versionLabel" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: zdmatch
{{- end }}

{{- define "zdmatch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "zdmatch.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The port of a host:port listen address. */}}
{{- define "zdmatch.port" -}}
{{- $parts := splitList ":" (toString .) }}
{{- last $parts | atoi }}
{{- end }}

{{/*
Each listen port names a container port, a Service port and the health
checks, which Kubernetes takes from 1 to 65535 only; the node refuses a port
over 65535 at startup, and would bind 0 to a random port nothing points at.
*/}}
{{- define "zdmatch.checkListens" -}}
{{- $seen := dict }}
{{- range $key := list "api" "http" "internal" "metrics" }}
{{- $listen := index $.Values.config $key "listen" | toString }}
{{- $port := include "zdmatch.port" $listen | atoi }}
{{- /* One port per listener: the container's ports and the API Service's must differ, and the node could bind only one of them. */}}
{{- with index $seen (toString $port) }}
{{- fail (printf "config.%s.listen (%s) uses port %d, as config.%s.listen does: each listener needs a port of its own (Kubernetes refuses a Service with two ports alike, and the node could not bind both)" $key $listen $port .) }}
{{- end }}
{{- $_ := set $seen (toString $port) $key }}
{{- if or (lt $port 1) (gt $port 65535) }}
{{- fail (printf "config.%s.listen (%s): the port must be from 1 to 65535: it is the container's port, a Service port and the port the kubelet checks, which Kubernetes refuses outside that range (the node refuses a port over 65535 at startup, and would take 0 as any free port)" $key $listen) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Milliseconds of a duration as the node reads it (src/config/formats.ts
parseDuration) and values.schema.json admits it: a number of ms, or a number
(decimals allowed) with an optional ms, s, m, h or d, such as 30s, 1.5m, 1500ms.
A number from a values file arrives as a float (1000000 prints as 1e+06).
Called with (list NAME VALUE): the node refuses a duration that is not a whole
number of milliseconds ("0.5ms", "1.0005s"), so the render fails naming NAME.
mulf multiplies exact decimals, as the node does.
*/}}
{{- define "zdmatch.ms" -}}
{{- $name := index . 0 }}
{{- $x := index . 1 }}
{{- $re := "^([0-9]+(\\.[0-9]+)?)\\s*(ms|s|m|h|d)?$" }}
{{- if or (kindIs "float64" $x) (kindIs "int64" $x) (kindIs "int" $x) }}{{ int64 $x }}
{{- else }}
{{- $v := toString $x | trim }}
{{- if not (regexMatch $re $v) }}{{ fail (printf "%s: cannot read %q as a duration (use 30s, 1.5m, 2h or 1500ms)" $name $v) }}{{ end }}
{{- $unitMs := dict "" 1 "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 }}
{{- $f := mulf (float64 (regexReplaceAll $re $v "${1}")) (get $unitMs (regexReplaceAll $re $v "${3}")) }}
{{- if ne (floor $f) $f }}{{ fail (printf "%s (%q) is not a whole number of milliseconds: the node refuses it at startup (src/config/formats.ts), so every pod would crash-loop" $name $v) }}{{ end }}
{{- int64 $f }}
{{- end }}
{{- end }}

{{/* Whole seconds (rounded up) of a duration: (list NAME VALUE), read as zdmatch.ms reads it. */}}
{{- define "zdmatch.seconds" -}}
{{- div (add (include "zdmatch.ms" . | atoi) 999) 1000 }}
{{- end }}

{{/*
Every duration key of the node's schema (src/config/schema.ts, format
duration) read as the node reads it, so one it refuses fails the render naming
it; and the ones the node arms a Node timer with (src/config/load.ts
TIMER_KEYS) at most 2^31-1 ms, about 24.8 days: a longer timer fires at once.
*/}}
{{- define "zdmatch.checkDurations" -}}
{{- $timers := list "matching.dispatchWait" "matching.stickyWait" "matching.syncMatchWait" "matching.headsResyncInterval" "matching.pingInterval" "limits.maxWait" "limits.httpKeepAliveTimeout" "cluster.heartbeat" "cluster.nodeTtl" "cluster.leaseTtl" "fetch.wait" "fetch.maxWait" "auth.reloadInterval" "drain.timeout" }}
{{- $values := .Values }}
{{- range $key := list "matching.dispatchWait" "matching.stickyWait" "matching.syncMatchWait" "matching.headsResyncInterval" "matching.pingInterval" "matching.busyStreamSilence" "limits.maxWait" "limits.httpHeadersTimeout" "limits.httpRequestTimeout" "limits.httpKeepAliveTimeout" "cluster.heartbeat" "cluster.nodeTtl" "cluster.leaseTtl" "steps.initialInterval" "steps.maxInterval" "fetch.lockDuration" "fetch.maxLockDuration" "fetch.wait" "fetch.maxWait" "outcomes.retention" "outcomes.redeliverAfter" "auth.reloadInterval" "drain.timeout" }}
{{- $p := splitList "." $key }}
{{- $name := print "config." $key }}
{{- $x := "" }}
{{- if hasPrefix "auth." $key }}{{ $name = $key }}{{ $x = index $values.auth (last $p) }}
{{- else }}{{ $x = index $values.config (first $p) (last $p) }}{{ end }}
{{- $ms := include "zdmatch.ms" (list $name $x) | atoi }}
{{- if and (has $key $timers) (gt $ms 2147483647) }}
{{- fail (printf "%s (%v) is %d ms, longer than a Node timer holds (at most 2147483647 ms, about 24.8 days): the node refuses it at startup (src/config/load.ts), so every pod would crash-loop" $name $x $ms) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The node's checks between config keys (src/config/load.ts checkRelations),
made at render time: the node refuses such a config at startup, so every new
pod would crash-loop. In the node's order, so both name the same key first.
Each check is [key, relation, bound], the bound another key or a number of
milliseconds (then its text follows).
*/}}
{{- define "zdmatch.checkRelations" -}}
{{- $c := .Values.config }}
{{- $v := dict "auth.reloadInterval" (include "zdmatch.ms" (list "auth.reloadInterval" .Values.auth.reloadInterval) | atoi) }}
{{- $raw := dict "auth.reloadInterval" .Values.auth.reloadInterval }}
{{- range $key := list "matching.dispatchWait" "matching.stickyWait" "matching.syncMatchWait" "matching.pingInterval" "cluster.heartbeat" "cluster.nodeTtl" "cluster.leaseTtl" "fetch.lockDuration" "fetch.maxLockDuration" "fetch.wait" "fetch.maxWait" "fetch.maxTasks" "fetch.maxMaxTasks" "steps.backoffCoefficient" "steps.initialInterval" "steps.maxInterval" "outcomes.retention" "outcomes.redeliverAfter" "limits.maxWait" "limits.httpRequestTimeout" "limits.httpHeadersTimeout" "limits.httpKeepAliveTimeout" }}
{{- $p := splitList "." $key }}
{{- $x := index $c (first $p) (last $p) }}
{{- $_ := set $raw $key $x }}
{{- /* counts and the coefficient are plain numbers, the rest durations */}}
{{- if has $key (list "fetch.maxTasks" "fetch.maxMaxTasks" "steps.backoffCoefficient") }}{{ $_ := set $v $key $x }}
{{- else }}{{ $_ := set $v $key (include "zdmatch.ms" (list (print "config." $key) $x)) }}{{ end }}
{{- end }}
{{- $checks := list
  (list "matching.syncMatchWait" "gt" 0 "0")
  (list "matching.stickyWait" "le" "matching.dispatchWait")
  (list "matching.dispatchWait" "gt" 0 "0")
  (list "matching.pingInterval" "gt" 0 "0")
  (list "cluster.heartbeat" "gt" 0 "0")
  (list "cluster.nodeTtl" "gt" "cluster.heartbeat")
  (list "cluster.leaseTtl" "ge" 3 "3ms")
  (list "fetch.lockDuration" "gt" 0 "0")
  (list "fetch.maxLockDuration" "gt" 0 "0")
  (list "fetch.lockDuration" "le" "fetch.maxLockDuration")
  (list "fetch.wait" "gt" 0 "0")
  (list "fetch.maxWait" "gt" 0 "0")
  (list "fetch.wait" "le" "fetch.maxWait")
  (list "fetch.maxTasks" "le" "fetch.maxMaxTasks")
  (list "steps.backoffCoefficient" "ge" 1 "1")
  (list "steps.initialInterval" "gt" 0 "0")
  (list "steps.maxInterval" "ge" "steps.initialInterval")
  (list "outcomes.retention" "ge" 1000 "1s")
  (list "outcomes.redeliverAfter" "gt" 0 "0")
  (list "limits.maxWait" "gt" 0 "0")
  (list "auth.reloadInterval" "gt" 0 "0")
  (list "limits.httpRequestTimeout" "gt" "fetch.maxWait")
  (list "limits.httpHeadersTimeout" "gt" 0 "0")
  (list "limits.httpHeadersTimeout" "le" "limits.httpRequestTimeout")
  (list "limits.httpKeepAliveTimeout" "gt" 0 "0")
}}
{{- $name := dict }}
{{- range $key, $x := $raw }}{{ $_ := set $name $key (printf "%s (%v)" (hasPrefix "auth." $key | ternary $key (print "config." $key)) $x) }}{{ end }}
{{- range $checks }}
{{- $key := index . 0 }}
{{- $op := index . 1 }}
{{- $bound := index . 2 }}
{{- $lhs := get $v $key | float64 }}
{{- $rhs := kindIs "string" $bound | ternary (get $v (toString $bound)) $bound | float64 }}
{{- $text := kindIs "string" $bound | ternary (get $name (toString $bound)) (last .) }}
{{- $ok := ternary (gt $lhs $rhs) (ternary (ge $lhs $rhs) (le $lhs $rhs) (eq $op "ge")) (eq $op "gt") }}
{{- if not $ok }}
{{- fail (printf "%s must %s %s: the node refuses to start with it (src/config/load.ts), so every pod would crash-loop" (get $name $key) (get (dict "gt" "be greater than" "ge" "be at least" "le" "not exceed") $op) $text) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name nodes verify their peers' certificates against: tls.peerServerName, else the API Service's DNS name. */}}
{{- define "zdmatch.peerServerName" -}}
{{- default (printf "%s.%s.svc" (include "zdmatch.fullname" .) .Release.Namespace) .Values.tls.peerServerName }}
{{- end }}

{{- define "zdmatch.redisSecretName" -}}
{{- default (printf "%s-redis" (include "zdmatch.fullname" .)) .Values.redis.existingSecret }}
{{- end }}

{{- define "zdmatch.authSecretName" -}}
{{- default (printf "%s-auth" (include "zdmatch.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{/*
Does the chart (or existingSecret) supply redis.url / redis.password? In
Cluster or Sentinel mode an existingSecret holds the password only: a URL
from it would make the node refuse two Redis modes.
*/}}
{{- define "zdmatch.redisHasUrl" -}}
{{- $r := .Values.redis }}
{{- if or $r.url (and $r.existingSecret (not $r.clusterNodes) (not $r.sentinels)) }}true{{ end }}
{{- end }}
{{- define "zdmatch.redisHasPassword" -}}
{{- if or .Values.redis.existingSecret .Values.redis.password }}true{{ end }}
{{- end }}

{{/*
The node's config.yaml: .Values.config plus the redis, auth and tls keys.
Secrets are not in it: redis.url and redis.password come from env
(ZD_REDIS_URL, ZD_REDIS_PASSWORD, which override the file), and
cluster.nodeId / internal.advertise from the pod (ZD_CLUSTER_NODE_ID,
ZD_INTERNAL_ADVERTISE).
*/}}
{{- define "zdmatch.configYaml" -}}
{{- include "zdmatch.checkDurations" . }}
{{- include "zdmatch.checkRelations" . }}
{{- include "zdmatch.checkListens" . }}
{{- $c := deepCopy .Values.config }}
{{- $r := .Values.redis }}
{{- if and (not $r.url) (not $r.existingSecret) (not $r.clusterNodes) (not $r.sentinels) }}
{{- fail "redis: set redis.url, redis.existingSecret, redis.clusterNodes or redis.sentinels (Redis is external; see the chart README)" }}
{{- end }}
{{- $modes := 0 }}
{{- range (list $r.url $r.clusterNodes $r.sentinels) }}{{ if . }}{{ $modes = add1 $modes }}{{ end }}{{ end }}
{{- if gt $modes 1 }}
{{- fail (printf "redis: set only one of redis.url, redis.clusterNodes, redis.sentinels (url %q, %d clusterNodes, %d sentinels); the node refuses more than one" $r.url (len $r.clusterNodes) (len $r.sentinels)) }}
{{- end }}
{{- /* As the node refuses them (src/config/load.ts): a natMap maps what a Cluster or Sentinel announces, and one announced address mapped twice. */}}
{{- if and $r.natMap (not $r.clusterNodes) (not $r.sentinels) }}
{{- fail "redis.natMap: set it with redis.clusterNodes or redis.sentinels only: it maps the addresses a Redis Cluster or Sentinel announces, and the node refuses it beside redis.url" }}
{{- end }}
{{- $announced := dict }}
{{- range $r.natMap }}
{{- $a := trim (first (splitList "=" .)) | replace "[" "" | replace "]" "" }}
{{- if hasKey $announced $a }}
{{- fail (printf "redis.natMap: %s is mapped twice; the node refuses that" (trim (first (splitList "=" .)))) }}
{{- end }}
{{- $_ := set $announced $a true }}
{{- end }}
{{- /* With existingSecret the chart renders no Redis Secret of its own: a url or password beside it would never reach the node. */}}
{{- if and $r.existingSecret (or $r.url $r.password) }}
{{- fail "redis: set redis.url / redis.password or redis.existingSecret, not both: with redis.existingSecret the node takes the URL and the password from that Secret only, and the values beside it would be dropped" }}
{{- end }}
{{- /* The node applies redis.password to Cluster and Sentinel only (src/store/redis.ts); a single Redis takes it from the URL. */}}
{{- if and $r.url $r.password }}
{{- fail "redis: put the password of a single Redis in redis.url (redis://:PASSWORD@host:6379), not in redis.password: the node applies redis.password to redis.clusterNodes and redis.sentinels only, and would connect to redis.url without it" }}
{{- end }}
{{- if and $r.url $r.username }}
{{- fail "redis: put the ACL user of a single Redis in redis.url (redis://USER:PASSWORD@host:6379), not in redis.username: the node applies redis.username to redis.clusterNodes and redis.sentinels only" }}
{{- end }}
{{- /* As the node refuses redis.tlsCa without TLS; with the URL in a Secret the chart cannot see a rediss:// scheme. */}}
{{- if and $r.tls.caSecret (not $r.tls.enabled) }}
{{- fail "redis.tls.caSecret: set redis.tls.enabled as well; the node refuses a CA bundle without TLS to Redis" }}
{{- end }}
{{- $tlsCa := ternary (printf "/etc/zdmatch/redis-tls/%s" $r.tls.caKey) "" (not (empty $r.tls.caSecret)) }}
{{- $_ := set $c "redis" (dict "url" "" "clusterNodes" $r.clusterNodes "sentinels" $r.sentinels "natMap" ($r.natMap | default list) "sentinelName" $r.sentinelName "username" $r.username "password" "" "tls" $r.tls.enabled "tlsCa" $tlsCa "keyPrefix" $r.keyPrefix "waitReplicas" (int $r.waitReplicas)) }}
{{- $a := .Values.auth }}
{{- $auth := dict "enabled" $a.enabled "workerTokensFile" "" "clientTokensFile" "" "reloadInterval" $a.reloadInterval }}
{{- if $a.enabled }}
{{- /* With existingSecret the chart renders no tokens Secret of its own: tokens given beside it would never reach the node. */}}
{{- if and $a.existingSecret (or $a.workerTokens $a.clientTokens) }}
{{- fail "auth: set auth.workerTokens / auth.clientTokens or auth.existingSecret, not both: with auth.existingSecret the node reads the tokens files from that Secret only, and the tokens beside it would be dropped" }}
{{- end }}
{{- if or $a.workerTokens $a.existingSecret }}{{ $_ := set $auth "workerTokensFile" "/etc/zdmatch/auth/worker-tokens.yaml" }}{{ end }}
{{- if or $a.clientTokens $a.existingSecret }}{{ $_ := set $auth "clientTokensFile" "/etc/zdmatch/auth/client-tokens.yaml" }}{{ end }}
{{- if and (not $auth.workerTokensFile) (not $auth.clientTokensFile) }}
{{- fail "auth.enabled is true (the default): set auth.existingSecret (a Secret with keys worker-tokens.yaml and client-tokens.yaml), or auth.workerTokens / auth.clientTokens; docs/security.md \"Tokens files\". To run without auth on a private network (a trial), set auth.enabled=false explicitly" }}
{{- end }}
{{- end }}
{{- $_ := set $c "auth" $auth }}
{{- $t := .Values.tls }}
{{- $tls := dict "enabled" $t.enabled "cert" "" "key" "" "ca" "" "peerServerName" "" }}
{{- if $t.enabled }}
{{- if not $t.existingSecret }}{{ fail "tls.enabled: set tls.existingSecret (a kubernetes.io/tls Secret)" }}{{ end }}
{{- $_ := set $tls "cert" "/etc/zdmatch/tls/tls.crt" }}
{{- $_ := set $tls "key" "/etc/zdmatch/tls/tls.key" }}
{{- if $t.ca }}{{ $_ := set $tls "ca" "/etc/zdmatch/tls/ca.crt" }}{{ end }}
{{- /* Peers dial pod IPs (ZD_INTERNAL_ADVERTISE) that the one shared certificate cannot name: verify them as a Service name instead. */}}
{{- $_ := set $tls "peerServerName" (include "zdmatch.peerServerName" .) }}
{{- end }}
{{- $_ := set $c "tls" $tls }}
{{- $_ := set $c.cluster "nodeId" "" }}
{{- $_ := set $c.internal "advertise" "" }}
{{- toYaml $c }}
{{- end }}

{{/*
Milliseconds of a Prometheus duration (1m30s, 15s, 500ms, 1h), the syntax of
the ServiceMonitor's interval and scrapeTimeout; fails on anything else.
*/}}
{{- define "zdmatch.promMs" -}}
{{- $re := "^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$" }}
{{- $v := toString .value }}
{{- if or (eq $v "") (not (regexMatch $re $v)) }}{{ fail (printf "%s: cannot read %q as a Prometheus duration (use 15s, 1m, 1m30s or 500ms)" .key $v) }}{{ end }}
{{- $ms := 0 }}
{{- range $i, $unit := list 31536000000 604800000 86400000 3600000 60000 1000 1 }}
{{- $n := regexReplaceAll $re $v (printf "${%d}" (add (mul $i 2) 2)) | atoi }}
{{- $ms = add $ms (mul $n $unit) }}
{{- end }}
{{- $ms }}
{{- end }}
