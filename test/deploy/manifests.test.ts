// deploy/ without a cluster or a Docker engine: every manifest against the Kubernetes and KEDA
// schemas (kubernetes-models' validators) and against their typed field lists (unknown fields
// rejected, as `kubectl apply --validate=strict` would), the Kustomize bases and the example
// overlay rendered by `kubectl kustomize`, the cross-object invariants a working deployment needs,
// and the Dockerfile's structure. The entry commands themselves run in integration/deploy-*.test.ts.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import {
  BASES,
  baseObjects,
  byKind,
  containersOf,
  deployDir,
  entryCommand,
  execForm,
  existsInRepo,
  findKubectl,
  flagValue,
  idOf,
  imageAppDir,
  jobSpecOf,
  kubeDir,
  kustomizeVersion,
  manifestFiles,
  objectNamed,
  parseDockerfile,
  parseYamlDocuments,
  podTemplateOf,
  renderKustomize,
  root,
  type K8sObject,
} from "../support/deploy.ts";

/** Where each kind's schema (validator and typed interface) lives. */
const MODELS: Record<string, { module: string; className: string; iface: string }> = {
  "v1/Secret": { module: "kubernetes-models/v1/Secret", className: "Secret", iface: "ISecret" },
  "v1/Service": { module: "kubernetes-models/v1/Service", className: "Service", iface: "IService" },
  "v1/PersistentVolumeClaim": { module: "kubernetes-models/v1/PersistentVolumeClaim", className: "PersistentVolumeClaim", iface: "IPersistentVolumeClaim" },
  "apps/v1/Deployment": { module: "kubernetes-models/apps/v1/Deployment", className: "Deployment", iface: "IDeployment" },
  "batch/v1/CronJob": { module: "kubernetes-models/batch/v1/CronJob", className: "CronJob", iface: "ICronJob" },
  "batch/v1/Job": { module: "kubernetes-models/batch/v1/Job", className: "Job", iface: "IJob" },
  "keda.sh/v1alpha1/ScaledObject": { module: "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject", className: "ScaledObject", iface: "IScaledObject" },
};

/** The metrics-api trigger's metadata keys (keda.sh/docs/scalers/metrics-api). */
const METRICS_API_KEYS = new Set(["url", "format", "valueLocation", "targetValue", "activationTargetValue", "unsafeSsl", "authMode", "method", "keyParamName"]);

const modelKey = (o: K8sObject): string => `${o.apiVersion}/${o.kind}`;

/** Validates one object with kubernetes-models; returns the error text, or null when valid. */
async function schemaErrors(o: K8sObject): Promise<string | null> {
  const model = MODELS[modelKey(o)];
  if (!model) return `no schema known for ${modelKey(o)}`;
  const mod = (await import(model.module)) as Record<string, new (data: unknown) => { validate(): void }>;
  try {
    new mod[model.className]!(o).validate();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Type-checks objects against kubernetes-models' interfaces with tsc: an object literal with a
 * property its interface lacks (a misspelt field) is an error. Returns tsc's diagnostics ("" when clean).
 */
function typeCheck(objects: ReadonlyArray<{ where: string; object: K8sObject }>): string {
  const dir = join(root, "tmp", `deploy-typecheck-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(dir, { recursive: true });
  try {
    const imports = new Set<string>();
    const lines: string[] = [];
    objects.forEach(({ where, object }, i) => {
      const model = MODELS[modelKey(object)];
      if (!model) throw new Error(`no schema known for ${modelKey(object)} (${where})`);
      imports.add(`import type { ${model.iface} } from "${model.module}";`);
      lines.push(`// ${where}: ${idOf(object)}`, `export const o${i}: ${model.iface} = ${JSON.stringify(object, null, 2)};`);
    });
    writeFileSync(join(dir, "check.ts"), [...imports, ...lines].join("\n") + "\n");
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", types: [] }, files: ["check.ts"] }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { encoding: "utf8", timeout: 120_000 });
    return r.status === 0 ? "" : `${r.stdout}${r.stderr}`.trim() || `tsc exited ${r.status}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const secretExample = (): K8sObject[] => parseYamlDocuments(readFileSync(join(kubeDir, "nats-secret.example.yaml"), "utf8"), "nats-secret.example.yaml");
const allPlain = (): Array<{ where: string; object: K8sObject }> => [
  ...BASES.flatMap((b) => manifestFiles(join(kubeDir, b)).flatMap((f) => f.docs.map((object) => ({ where: relative(root, f.file), object })))),
  ...secretExample().map((object) => ({ where: "deploy/kubernetes/nats-secret.example.yaml", object })),
];

/** What a working deployment needs across objects; `objects` are one namespace's worth. */
function assertInvariants(objects: readonly K8sObject[], label: string): void {
  const dockerfile = parseDockerfile();
  const imageUser = dockerfile.instructions.filter((i) => i.keyword === "USER" && i.stage === dockerfile.stages.length - 1).pop()!.args;
  const imageUid = Number(imageUser.split(":")[0]);
  const tmpdir = /TMPDIR=(\S+)/.exec(dockerfile.instructions.filter((i) => i.keyword === "ENV").map((i) => i.args).join(" "))?.[1];
  const cronJobs = byKind(objects, "CronJob");
  const deployments = byKind(objects, "Deployment");
  const secretName = secretExample()[0]!.metadata.name;

  // Every pod: non-root as the image's user, read-only root with a writable TMPDIR, the NATS Secret, limits.
  for (const o of [...cronJobs.values(), ...deployments.values()]) {
    const pod = podTemplateOf(o).spec;
    const where = `${label}: ${idOf(o)}`;
    assert.equal(pod.securityContext?.runAsNonRoot, true, `${where}: runAsNonRoot`);
    assert.equal(pod.securityContext?.runAsUser, imageUid, `${where}: runAsUser is the image's USER ${imageUser}`);
    assert.equal(pod.automountServiceAccountToken, false, `${where}: evalfleet needs no Kubernetes API token`);
    for (const c of containersOf(o)) {
      const cw = `${where} container ${c.name}`;
      for (const kind of ["requests", "limits"]) for (const r of ["cpu", "memory"]) assert.ok(c.resources?.[kind]?.[r] !== undefined, `${cw}: resources.${kind}.${r}`);
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${cw}: read-only root filesystem`);
      const tmpMount = (c.volumeMounts ?? []).find((m: { mountPath: string }) => m.mountPath === tmpdir);
      assert.ok(tmpMount, `${cw}: TMPDIR ${tmpdir} (tsx's compile cache) is a writable mount`);
      assert.ok(pod.volumes.find((v: { name: string; emptyDir?: unknown }) => v.name === tmpMount.name && v.emptyDir), `${cw}: ${tmpdir} is an emptyDir`);
      assert.ok((c.envFrom ?? []).some((e: { secretRef?: { name: string } }) => e.secretRef?.name === secretName), `${cw}: NATS settings from Secret ${secretName}`);
      assert.ok(c.image, `${cw}: image`);
      const threads = flagValue(c.args, "--threads");
      if (threads) assert.ok(Number(threads) <= Number(c.resources.limits.cpu), `${cw}: --threads ${threads} fits the CPU limit ${c.resources.limits.cpu}`);
    }
    // Every Secret volume is optional or is the NATS Secret itself.
    for (const v of pod.volumes ?? []) if (v.secret) assert.equal(v.secret.optional, true, `${where}: Secret volume ${v.name} is optional`);
  }
  // One image everywhere, so one `images:` entry retargets every pod.
  const images = new Set([...cronJobs.values(), ...deployments.values()].flatMap((o) => containersOf(o).map((c) => c.image)));
  assert.equal(images.size, 1, `${label}: one image for every container, got ${[...images].join(", ")}`);

  // Workers (Job pods and the pool): health endpoint behind probes, drain shorter than the grace period.
  for (const o of [...cronJobs.values(), ...deployments.values()]) {
    for (const c of containersOf(o)) {
      if (c.args[0] !== "worker" && c.args[0] !== "queue-metrics") continue;
      const cw = `${label}: ${idOf(o)} container ${c.name}`;
      const port = Number(flagValue(c.args, "--http-port"));
      assert.ok(port > 0, `${cw}: --http-port`);
      const named = (c.ports ?? []).find((p: { containerPort: number }) => p.containerPort === port);
      assert.ok(named, `${cw}: containerPort ${port} declared`);
      const probePort = (probe: { httpGet: { port: string | number } }): number => (typeof probe.httpGet.port === "number" ? probe.httpGet.port : c.ports.find((p: { name: string }) => p.name === probe.httpGet.port)?.containerPort);
      for (const [probe, path] of [["startupProbe", "/healthz"], ["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"]] as const) {
        assert.equal(c[probe]?.httpGet?.path, path, `${cw}: ${probe} GETs ${path}`);
        assert.equal(probePort(c[probe]), port, `${cw}: ${probe} targets the --http-port`);
      }
      if (c.args[0] === "worker") {
        const drain = Number(flagValue(c.args, "--drain") ?? 20);
        const grace = podTemplateOf(o).spec.terminationGracePeriodSeconds ?? 30;
        assert.ok(grace >= drain + 20, `${cw}: terminationGracePeriodSeconds ${grace} leaves the drain (${drain}s) 20s to hand back and disconnect`);
      }
    }
  }

  // The nightly pair.
  const coordinator = [...cronJobs.values()].find((o) => containersOf(o)[0].args.slice(0, 2).join(" ") === "coordinator run");
  const workers = [...cronJobs.values()].find((o) => containersOf(o)[0].args[0] === "worker");
  if (coordinator || workers) {
    assert.ok(coordinator && workers, `${label}: a coordinator CronJob and a workers CronJob`);
    for (const field of ["schedule", "timeZone", "concurrencyPolicy", "startingDeadlineSeconds"]) {
      assert.equal(coordinator.spec[field], workers.spec[field], `${label}: both CronJobs share ${field} (the run id comes from the scheduled minute)`);
    }
    assert.equal(coordinator.spec.concurrencyPolicy, "Forbid", `${label}: one nightly run at a time`);
    const envOf = (o: K8sObject): Record<string, any> => Object.fromEntries(containersOf(o)[0].env.map((e: { name: string }) => [e.name, e]));
    const [ce, we] = [envOf(coordinator), envOf(workers)];
    for (const e of [ce, we]) assert.equal(e.EVALFLEET_JOB_NAME?.valueFrom?.fieldRef?.fieldPath, "metadata.labels['batch.kubernetes.io/job-name']", `${label}: the Job name from the downward API`);
    assert.equal(ce.EVALFLEET_RUN_PREFIX?.value, we.EVALFLEET_RUN_PREFIX?.value, `${label}: both derive the run id with one prefix`);
    assert.ok(!ce.EVALFLEET_RUN_ID && !we.EVALFLEET_RUN_ID, `${label}: no fixed run id (it would repeat every night)`);
    assert.equal(ce.EVALFLEET_RESUME_EXISTING?.value, "true", `${label}: a replaced coordinator pod resumes the run`);
    assert.equal(ce.EVALFLEET_ON_SIGTERM?.value, "leave", `${label}: an evicted coordinator leaves the run to its replacement`);

    for (const [o, container, failCodes] of [
      [coordinator, "coordinator", [1, 2, 3]],
      [workers, "worker", [2]],
    ] as const) {
      const job = jobSpecOf(o);
      const where = `${label}: ${idOf(o)}`;
      assert.equal(podTemplateOf(o).spec.restartPolicy, "Never", `${where}: restartPolicy Never (podFailurePolicy requires it)`);
      for (const f of ["backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"]) assert.equal(typeof job[f], "number", `${where}: ${f}`);
      const [first, second] = job.podFailurePolicy.rules;
      assert.deepEqual(first, { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] }, `${where}: evictions are not failures (first rule)`);
      assert.deepEqual(second, { action: "FailJob", onExitCodes: { containerName: container, operator: "In", values: [...failCodes] } }, `${where}: verdict exit codes fail the Job at once`);
      assert.equal(containersOf(o)[0].name, container, `${where}: the container the rules name`);
    }
    assert.equal(jobSpecOf(workers).completions, undefined, `${label}: workers are a work-queue Job (no completions)`);
    assert.ok(jobSpecOf(workers).parallelism >= 1, `${label}: workers' parallelism`);
    assert.equal(jobSpecOf(coordinator).parallelism ?? 1, 1, `${label}: one coordinator`);

    // The run's own budget ends before the Job's, leaving time to cancel and write the report.
    const cArgs: string[] = containersOf(coordinator)[0].args;
    const deadline = Number(flagValue(cArgs, "--deadline"));
    const cancelGrace = Number(flagValue(cArgs, "--cancel-grace") ?? 15);
    assert.ok(deadline + cancelGrace + 60 <= jobSpecOf(coordinator).activeDeadlineSeconds, `${label}: --deadline ${deadline}s + cancel grace leaves a minute before activeDeadlineSeconds`);
    assert.ok(jobSpecOf(workers).activeDeadlineSeconds >= jobSpecOf(coordinator).activeDeadlineSeconds, `${label}: workers outlive the coordinator's budget`);

    // Reports go to a mounted PersistentVolumeClaim.
    const c = containersOf(coordinator)[0];
    for (const flag of ["--json-output", "--junit"]) {
      const path = flagValue(cArgs, flag);
      assert.ok(path, `${label}: coordinator writes ${flag}`);
      const mount = c.volumeMounts.find((m: { mountPath: string }) => path.startsWith(`${m.mountPath}/`));
      assert.ok(mount, `${label}: ${flag} ${path} is on a mounted volume`);
      const volume = podTemplateOf(coordinator).spec.volumes.find((v: { name: string }) => v.name === mount.name);
      const claim = volume?.persistentVolumeClaim?.claimName;
      assert.ok(claim && byKind(objects, "PersistentVolumeClaim").has(claim), `${label}: ${flag} lands on PVC ${claim}, which is deployed`);
    }
    assert.equal(podTemplateOf(coordinator).spec.securityContext.fsGroup, imageUid, `${label}: the reports volume is writable by the image's user`);
  }

  // The pool: KEDA scales the Deployment on queue-metrics' lag, reached through its Service.
  for (const so of byKind(objects, "ScaledObject").values()) {
    const where = `${label}: ${idOf(so)}`;
    const target = deployments.get(so.spec.scaleTargetRef.name);
    assert.ok(target, `${where}: scales a Deployment that is deployed`);
    assert.equal(target.spec.replicas, undefined, `${where}: the Deployment leaves replicas to KEDA`);
    assert.equal(so.spec.minReplicaCount, 0, `${where}: scales to zero`);
    assert.ok(so.spec.fallback?.replicas >= 1, `${where}: a fallback when the metric cannot be read`);
    const [trigger] = so.spec.triggers;
    assert.equal(trigger.type, "metrics-api", where);
    for (const key of Object.keys(trigger.metadata)) assert.ok(METRICS_API_KEYS.has(key), `${where}: metrics-api has no metadata key '${key}'`);
    assert.equal(trigger.metadata.valueLocation, "lag", `${where}: scales on queued + in-flight cases`);
    const workerArgs: string[] = containersOf(target)[0].args;
    assert.equal(workerArgs[0], "worker", where);
    assert.equal(flagValue(workerArgs, "--run"), undefined, `${where}: pool workers serve every run of their suite`);
    assert.equal(Number(trigger.metadata.targetValue), Number(flagValue(workerArgs, "--concurrency")), `${where}: one worker per --concurrency cases`);
    const url = new URL(trigger.metadata.url);
    const [service, namespace, ...rest] = url.hostname.split(".");
    assert.equal(rest.join("."), "svc.cluster.local", `${where}: a cluster-local Service URL`);
    assert.equal(namespace, so.metadata.namespace, `${where}: KEDA resolves the URL from its own namespace, so it must name this one`);
    const svc = objectNamed(objects, "Service", service!);
    const port = svc.spec.ports.find((p: { port: number }) => p.port === Number(url.port));
    assert.ok(port, `${where}: Service ${service} has port ${url.port}`);
    const backend = [...deployments.values()].find((d) => Object.entries(svc.spec.selector).every(([k, v]) => podTemplateOf(d).metadata?.labels?.[k] === v));
    assert.ok(backend, `${where}: Service ${service} selects a Deployment`);
    const qm = containersOf(backend)[0];
    assert.equal(qm.args[0], "queue-metrics", `${where}: the Service fronts queue-metrics`);
    const targetPort = typeof port.targetPort === "number" ? port.targetPort : qm.ports.find((p: { name: string }) => p.name === port.targetPort)?.containerPort;
    assert.equal(targetPort, Number(flagValue(qm.args, "--http-port")), `${where}: the Service reaches queue-metrics' --http-port`);
    assert.equal(url.pathname, "/queue", where);
    assert.equal(podTemplateOf(backend).spec.automountServiceAccountToken, false, where);
    assert.equal(containersOf(backend)[0].image, containersOf(target)[0].image, `${where}: queue-metrics loads the same suite image as the workers`);
  }
}

describe("deploy/kubernetes: schemas", () => {
  test("every manifest passes the Kubernetes and KEDA schemas", async () => {
    const objects = allPlain();
    assert.ok(objects.length >= 8, `found ${objects.length} objects`);
    const kinds = new Set(objects.map((o) => modelKey(o.object)));
    for (const k of ["batch/v1/CronJob", "apps/v1/Deployment", "v1/Service", "v1/PersistentVolumeClaim", "v1/Secret", "keda.sh/v1alpha1/ScaledObject"]) assert.ok(kinds.has(k), `a ${k} is deployed`);
    for (const { where, object } of objects) assert.equal(await schemaErrors(object), null, `${where}: ${idOf(object)}`);
  });

  test("the schema check catches a wrong type and a missing required field", async () => {
    const cron = structuredClone(objectNamed(baseObjects("nightly"), "CronJob", "evalfleet-nightly-workers"));
    cron.spec.jobTemplate.spec.parallelism = "4";
    assert.match((await schemaErrors(cron)) ?? "", /parallelism must be integer/);
    const so = structuredClone(objectNamed(baseObjects("pool"), "ScaledObject", "evalfleet-worker"));
    delete so.spec.scaleTargetRef;
    assert.match((await schemaErrors(so)) ?? "", /scaleTargetRef/);
  });

  test("no unknown fields: every manifest type-checks against the schemas' field lists", () => {
    assert.equal(typeCheck(allPlain()), "");
  });

  test("the field check catches a misspelt field in a Job and in a ScaledObject", () => {
    const cron = structuredClone(objectNamed(baseObjects("nightly"), "CronJob", "evalfleet-nightly-coordinator"));
    cron.spec.jobTemplate.spec.activeDeadlineSecond = 60;
    const so = structuredClone(objectNamed(baseObjects("pool"), "ScaledObject", "evalfleet-worker"));
    so.spec.cooldownPeriods = 60;
    const out = typeCheck([
      { where: "typo", object: cron },
      { where: "typo", object: so },
    ]);
    assert.match(out, /'"?activeDeadlineSecond"?' does not exist in type 'IJobSpec'/);
    assert.match(out, /'"?cooldownPeriods"?' does not exist/);
  });

  test("cross-object invariants of the plain YAML (both bases together, one namespace)", () => {
    assertInvariants([...BASES.flatMap((b) => baseObjects(b)), ...secretExample()], "plain YAML");
  });

  test("the invariants check catches drift between the nightly CronJobs and a wrong KEDA URL", () => {
    const objects = [...BASES.flatMap((b) => baseObjects(b)), ...secretExample()].map((o) => structuredClone(o));
    objectNamed(objects, "CronJob", "evalfleet-nightly-workers").spec.schedule = "0 3 * * *";
    assert.throws(() => assertInvariants(objects, "drift"), /share schedule/);
    const again = [...BASES.flatMap((b) => baseObjects(b)), ...secretExample()].map((o) => structuredClone(o));
    for (const o of again) o.metadata.namespace = "other";
    assert.throws(() => assertInvariants(again, "moved"), /must name this one/);
  });
});

describe("deploy/kubernetes: kustomize", () => {
  let kubectl: string;
  before(() => {
    const found = findKubectl();
    assert.ok(found, "kubectl is needed to render the Kustomize bases: .ci/run installs it (apt-get install -y kubernetes-client)");
    kubectl = found;
  });

  test("each base lists every manifest of its folder and renders to exactly the plain YAML", () => {
    for (const base of BASES) {
      const dir = join(kubeDir, base);
      const k = parseYaml(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as { resources: string[] };
      assert.deepEqual([...k.resources].sort(), manifestFiles(dir).map((f) => relative(dir, f.file)).sort(), `${base}: kustomization lists every manifest`);
      const rendered = renderKustomize(kubectl, dir);
      const plain = baseObjects(base);
      assert.deepEqual(rendered.map(idOf).sort(), plain.map(idOf).sort(), `${base}: the same objects`);
      for (const p of plain) assert.deepEqual(rendered.find((r) => idOf(r) === idOf(p)), p, `${base}: ${idOf(p)} renders unchanged`);
    }
  });

  test("the example overlay renders, passes the schemas, and keeps every invariant", async (t) => {
    const version = kustomizeVersion(kubectl);
    // kubectl 1.20 (Debian's kubernetes-client) embeds Kustomize v2.0.3, which reads only files in
    // `resources`; the overlay uses the current form (directories, `patches`).
    if (version && /^v[12]\./.test(version)) {
      t.skip(`Kustomize ${version} predates directories in resources; the bases above rendered with it`);
      return;
    }
    const objects = renderKustomize(kubectl, join(kubeDir, "overlays", "example"));
    assert.deepEqual(objects.map((o) => o.metadata.name).sort(), BASES.flatMap((b) => baseObjects(b)).map((o) => o.metadata.name).sort());
    for (const o of objects) {
      assert.equal(o.metadata.namespace, "evals-prod", idOf(o));
      assert.equal(await schemaErrors(o), null, idOf(o));
      for (const c of o.kind === "CronJob" || o.kind === "Deployment" ? containersOf(o) : []) assert.equal(c.image, "registry.example.com/acme/evals:2026.11.30", idOf(o));
    }
    assert.equal(typeCheck(objects.map((object) => ({ where: "overlay", object }))), "");
    const coordinator = objectNamed(objects, "CronJob", "evalfleet-nightly-coordinator");
    assert.equal(coordinator.spec.schedule, "30 1 * * 1-5");
    assert.equal(flagValue(containersOf(coordinator)[0].args, "--tag"), "regression");
    assert.equal(jobSpecOf(objectNamed(objects, "CronJob", "evalfleet-nightly-workers")).parallelism, 8);
    const example = secretExample().map((s) => ({ ...s, metadata: { ...s.metadata, namespace: "evals-prod" } }));
    assertInvariants([...objects, ...example], "overlay");
  });
});

describe("deploy/Dockerfile", () => {
  const df = parseDockerfile();
  const final = df.stages.length - 1;
  const inFinal = (keyword: string) => df.instructions.filter((i) => i.keyword === keyword && i.stage === final);

  test("multi-stage: dependencies and suite built apart, a runtime stage last", () => {
    assert.ok(df.stages.length >= 2, "at least two stages");
    assert.deepEqual(df.stages.map((s) => s.name), ["deps", "suite", "runtime"]);
    const nodeImage = df.argDefaults.get("NODE_IMAGE");
    assert.match(nodeImage ?? "", /^node:20[.\w-]*$/, "Node 20, as package.json's engines");
    assert.deepEqual(df.stages.map((s) => s.from), ["${NODE_IMAGE}", "deps", "${NODE_IMAGE}"], "one Node image; the suite is built with the deps stage's toolchain");
    // A toolchain for native addons where dependencies are installed, none in the runtime.
    const runs = (stage: number): string => df.instructions.filter((i) => i.keyword === "RUN" && i.stage === stage).map((i) => i.args).join(" ");
    assert.match(runs(0), /apt-get install[^&]*\bg\+\+/, "the deps stage can build native addons");
    assert.doesNotMatch(runs(final), /\b(g\+\+|gcc|make|python3)\b/, "no compiler in the runtime image");
    // The runtime gets node_modules from the deps stage and never runs npm itself.
    assert.ok(inFinal("COPY").some((i) => /^--from=deps\s+\/app\/node_modules\s/.test(i.args)));
    assert.ok(!inFinal("RUN").some((i) => /\bnpm\b/.test(i.args)), "no npm in the runtime stage");
    assert.match(runs(0), /npm ci --omit=dev/, "production dependencies only, from the lock file");
  });

  test("runs as a numeric non-root user, with an exec-form entry point that reaches bin/evalfleet.mjs", () => {
    const user = inFinal("USER").pop()?.args ?? "";
    assert.match(user, /^[1-9]\d*(:\d+)?$/, `numeric non-root USER (runAsNonRoot can verify it), got '${user}'`);
    const entry = execForm(df, "ENTRYPOINT");
    assert.deepEqual(entry.slice(0, 2), ["/usr/bin/tini", "--"], "tini forwards SIGTERM and reaps children");
    assert.ok(inFinal("RUN").some((i) => /apt-get install[^&]*\btini\b/.test(i.args)), "tini is installed");
    const app = imageAppDir(df);
    assert.equal(app, "/app");
    assert.deepEqual(entry.slice(2), ["node", `${app}/bin/evalfleet.mjs`]);
    assert.deepEqual(execForm(df, "CMD"), ["worker"]);
    assert.deepEqual(entryCommand(["coordinator", "run", "--tag", "regression"], df), {
      command: process.execPath,
      args: [join(root, "bin", "evalfleet.mjs"), "coordinator", "run", "--tag", "regression"],
    });
  });

  test("every file it copies exists, .dockerignore keeps none of them out, and the code it runs is all copied", () => {
    const copies = df.instructions.filter((i) => i.keyword === "COPY" && !i.args.startsWith("--from="));
    const sources = copies.flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    const suiteDir = df.argDefaults.get("SUITE_DIR");
    const resolved = sources.map((s) => s.replace("${SUITE_DIR}", suiteDir ?? "${SUITE_DIR}").replace(/\/$/, ""));
    for (const s of resolved) assert.ok(existsInRepo(s), `COPY source ${s} exists`);
    const ignored = readFileSync(join(root, ".dockerignore"), "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
    for (const s of resolved) for (const pattern of ignored) assert.ok(!(s === pattern || s.startsWith(`${pattern}/`)), `.dockerignore '${pattern}' would drop ${s}`);

    // Where the image puts each copied path, and the default suite it names.
    const app = imageAppDir(df);
    const inImage = new Set(copies.filter((i) => i.stage === final).flatMap((i) => i.args.split(/\s+/).slice(0, -1)).map((s) => s.replace(/\/$/, "")));
    const env = inFinal("ENV").map((i) => i.args).join(" ");
    const suitePath = /EVALFLEET_SUITE=(\S+)/.exec(env)?.[1]?.replace("${SUITE_FILE}", df.argDefaults.get("SUITE_FILE") ?? "");
    assert.equal(suitePath, `${app}/suite/math-suite.ts`);
    assert.ok(existsInRepo(join(suiteDir!, "math-suite.ts")), "the default suite exists in the default SUITE_DIR");

    // Follow relative imports from the entry point and the thread entry: every file must be in a copied path.
    const seen = new Set<string>();
    // The image runs the compiled dist/ (the thread entry is dist/worker/pool/thread.cjs); bin looks
    // for index.ts and then runs scripts/build.mjs only in a checkout, which the image is not.
    const queue = [join(root, "bin", "evalfleet.mjs"), join(root, "dist", "worker", "pool", "thread.cjs")];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const rel = relative(root, file);
      assert.ok([...inImage].some((p) => rel === p || rel.startsWith(`${p}/`)), `${rel} is run by the image but not copied into it`);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*|new URL\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
        const target = resolve(dirname(file), m[1]!);
        if (file.endsWith(join("bin", "evalfleet.mjs")) && [join(root, "index.ts"), join(root, "scripts", "build.mjs")].includes(target)) continue;
        queue.push(target);
      }
    }
    assert.ok(seen.size > 20, `followed ${seen.size} files`);
  });
});

describe("deploy/nats/values.yaml", () => {
  test("a JetStream cluster large enough for the stream replicas the manifests ask for, and the Secret's user", () => {
    const values = parseYaml(readFileSync(join(deployDir, "nats", "values.yaml"), "utf8")) as any;
    assert.equal(values.config.jetstream.enabled, true);
    assert.equal(values.config.cluster.enabled, true);
    const replicas = new Set(
      BASES.flatMap((b) => baseObjects(b))
        .filter((o) => o.kind === "CronJob" || o.kind === "Deployment")
        .flatMap((o) => containersOf(o).flatMap((c) => (c.env ?? []).filter((e: { name: string }) => e.name === "EVALFLEET_STREAM_REPLICAS").map((e: { value: string }) => Number(e.value)))),
    );
    assert.equal(replicas.size, 1, "one replica count everywhere");
    assert.ok(values.config.cluster.replicas >= [...replicas][0]!, "enough NATS nodes for the stream replicas");
    const secret = secretExample()[0]!;
    const users = Object.values(values.config.merge.accounts as Record<string, { users: Array<{ user: string }>; jetstream: string }>);
    assert.ok(users.some((a) => a.jetstream === "enabled" && a.users.some((u) => u.user === secret.stringData.NATS_USER)), "the Secret's NATS_USER is a JetStream-enabled user");
    assert.match(secret.stringData.NATS_URL, /^nats:\/\/nats\.nats\.svc\.cluster\.local:4222$/, "the chart's client Service in namespace nats");
  });
});
