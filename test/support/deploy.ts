/**
 * Reading deploy/: the manifests (plain YAML and `kubectl kustomize` output), the Dockerfile, and
 * what a container of a manifest would run (its command line and environment), so tests can run
 * the same entry commands as plain processes. Pure except for {@link renderKustomize} (kubectl)
 * and the file reads.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

export const root = join(import.meta.dirname, "..", "..");
export const deployDir = join(root, "deploy");
export const kubeDir = join(deployDir, "kubernetes");
/** The kustomization bases. */
export const BASES = ["nightly", "pool"] as const;

/** A Kubernetes object as parsed from YAML. */
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [key: string]: any };

/** Every document of a YAML text (empty documents dropped); a YAML error throws naming `where`. */
export function parseYamlDocuments(text: string, where: string): K8sObject[] {
  const docs = parseAllDocuments(text);
  const out: K8sObject[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${where}: ${doc.errors.map((e) => e.message).join("; ")}`);
    const value = doc.toJS() as K8sObject | null;
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** The YAML files of a folder (not kustomization.yaml), with their documents. */
export function manifestFiles(dir: string): Array<{ file: string; docs: K8sObject[] }> {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== "kustomization.yaml")
    .sort()
    .map((f) => ({ file: join(dir, f), docs: parseYamlDocuments(readFileSync(join(dir, f), "utf8"), join(dir, f)) }));
}

/** The objects of a base's plain YAML files. */
export function baseObjects(base: (typeof BASES)[number]): K8sObject[] {
  return manifestFiles(join(kubeDir, base)).flatMap((f) => f.docs);
}

/** `kind/namespace/name`, how kustomize identifies an object. */
export const idOf = (o: K8sObject): string => `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;

/** The kubectl binary, or null. */
export function findKubectl(): string | null {
  const which = spawnSync("sh", ["-c", "command -v kubectl"], { encoding: "utf8" });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : null;
}

/**
 * The Kustomize version inside kubectl, e.g. `v5.5.0`. kubectl before 1.21 does not print it and
 * embeds Kustomize v2.0.3 (Debian 12's kubernetes-client is kubectl 1.20).
 */
export function kustomizeVersion(kubectl: string): string | null {
  const r = spawnSync(kubectl, ["version", "--client"], { encoding: "utf8", timeout: 20_000 });
  const said = /Kustomize Version:\s*(v[\d.]+)/.exec(r.stdout)?.[1];
  if (said) return said;
  const minor = /Minor:"(\d+)/.exec(r.stdout)?.[1] ?? /Client Version: v1\.(\d+)/.exec(r.stdout)?.[1];
  return minor !== undefined && Number(minor) <= 20 ? "v2.0.3" : null;
}

/** `kubectl kustomize <dir>`, parsed. Throws with kubectl's message when it fails. */
export function renderKustomize(kubectl: string, dir: string): K8sObject[] {
  const r = spawnSync(kubectl, ["kustomize", dir], { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed (${r.status}): ${r.stderr || r.error?.message}`);
  return parseYamlDocuments(r.stdout, `kubectl kustomize ${dir}`);
}

/** The objects of `kind`, by name. */
export function byKind(objects: readonly K8sObject[], kind: string): Map<string, K8sObject> {
  return new Map(objects.filter((o) => o.kind === kind).map((o) => [o.metadata.name, o]));
}

/** One object by kind and name; throws when absent. */
export function objectNamed(objects: readonly K8sObject[], kind: string, name: string): K8sObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name} among ${objects.map(idOf).join(", ")}`);
  return o;
}

/** The pod template of a CronJob, Job or Deployment. */
export function podTemplateOf(o: K8sObject): { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: any } {
  if (o.kind === "CronJob") return o.spec.jobTemplate.spec.template;
  if (o.kind === "Job" || o.kind === "Deployment") return o.spec.template;
  throw new Error(`${idOf(o)} has no pod template`);
}

/** The Job spec of a CronJob (or a Job's own spec). */
export function jobSpecOf(o: K8sObject): any {
  if (o.kind === "CronJob") return o.spec.jobTemplate.spec;
  if (o.kind === "Job") return o.spec;
  throw new Error(`${idOf(o)} is not a Job or CronJob`);
}

/** The containers of a workload. */
export function containersOf(o: K8sObject): any[] {
  return podTemplateOf(o).spec.containers as any[];
}

/** `--name=value` or `--name value` from a container's args, or undefined. */
export function flagValue(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  args.forEach((a, i) => {
    if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
    else if (a === name) value = args[i + 1];
  });
  return value;
}

/** What the test side supplies for a pod: its labels (the downward API), Secrets, mounted folders. */
export interface PodFacts {
  /** Pod labels, e.g. `batch.kubernetes.io/job-name`. */
  labels: Record<string, string>;
  /** Secret name -> data (what envFrom secretRef exposes). */
  secrets: Record<string, Record<string, string>>;
  /** Mount path in the container -> folder on this machine. */
  mounts?: Record<string, string>;
}

/**
 * A container's environment as the kubelet would build it: `envFrom` Secrets, then `env`
 * (literal values with `$(VAR)` expanded, and `fieldRef` on `metadata.labels['...']`).
 */
export function containerEnv(container: any, facts: PodFacts): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const name = from.secretRef?.name;
    if (!name) throw new Error(`unsupported envFrom ${JSON.stringify(from)}`);
    const data = facts.secrets[name];
    if (!data && !from.secretRef.optional) throw new Error(`container ${container.name} needs Secret ${name}`);
    Object.assign(env, data ?? {});
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = expandVars(String(e.value), env);
    else if (e.valueFrom?.fieldRef) {
      const m = /^metadata\.labels\['(.+)'\]$/.exec(e.valueFrom.fieldRef.fieldPath);
      if (!m) throw new Error(`unsupported fieldRef ${e.valueFrom.fieldRef.fieldPath}`);
      const label = facts.labels[m[1]!];
      if (label === undefined) throw new Error(`container ${container.name} reads pod label ${m[1]}, which the test did not give`);
      env[e.name] = label;
    } else throw new Error(`unsupported env entry ${JSON.stringify(e)}`);
  }
  return env;
}

/**
 * A container's args with `$(VAR)` expanded from its environment (as Kubernetes does) and mount
 * paths mapped to the test's folders.
 */
export function containerArgs(container: any, env: Record<string, string>, facts: PodFacts): string[] {
  return (container.args ?? []).map((a: string) => mapMounts(expandVars(a, env), facts.mounts ?? {}));
}

function expandVars(text: string, env: Record<string, string>): string {
  return text.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);
}

function mapMounts(arg: string, mounts: Record<string, string>): string {
  for (const [path, dir] of Object.entries(mounts)) {
    arg = arg.replace(new RegExp(`(^|=)${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=/|$)`), `$1${dir}`);
  }
  return arg;
}

// ---------------------------------------------------------------------------------------------
// The Dockerfile

/** One Dockerfile instruction. */
export interface DockerInstruction {
  keyword: string;
  /** The rest of the line (continuations joined). */
  args: string;
  /** 0-based stage index (-1 before the first FROM). */
  stage: number;
}

/** A parsed Dockerfile: instructions and stages. */
export interface Dockerfile {
  instructions: DockerInstruction[];
  stages: Array<{ from: string; name: string | null }>;
  /** Global ARG defaults (before the first FROM) and each stage's ARG defaults. */
  argDefaults: Map<string, string>;
}

/** Parses deploy/Dockerfile (comments, line continuations, stages, ARG defaults). */
export function parseDockerfile(text: string = readFileSync(join(deployDir, "Dockerfile"), "utf8")): Dockerfile {
  const logical: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    if (current === "" && /^\s*#/.test(line)) continue;
    if (line.endsWith("\\")) {
      current += line.slice(0, -1) + " ";
      continue;
    }
    current += line;
    if (current.trim()) logical.push(current.trim());
    current = "";
  }
  const instructions: DockerInstruction[] = [];
  const stages: Dockerfile["stages"] = [];
  const argDefaults = new Map<string, string>();
  for (const l of logical) {
    const m = /^(\w+)\s+([\s\S]*)$/.exec(l);
    if (!m) continue;
    const keyword = m[1]!.toUpperCase();
    const args = m[2]!.trim();
    if (keyword === "FROM") {
      const f = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ from: f?.[1] ?? args, name: f?.[2] ?? null });
    }
    if (keyword === "ARG") {
      const a = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(args);
      if (a && a[2] !== undefined) argDefaults.set(a[1]!, a[2]!);
    }
    instructions.push({ keyword, args, stage: stages.length - 1 });
  }
  return { instructions, stages, argDefaults };
}

/** The exec-form (JSON array) value of the last `keyword` (ENTRYPOINT, CMD) of the final stage. */
export function execForm(df: Dockerfile, keyword: "ENTRYPOINT" | "CMD"): string[] {
  const last = df.stages.length - 1;
  const ins = df.instructions.filter((i) => i.keyword === keyword && i.stage === last).pop();
  if (!ins) throw new Error(`the final stage has no ${keyword}`);
  const parsed = JSON.parse(ins.args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === "string")) throw new Error(`${keyword} is not in exec form: ${ins.args}`);
  return parsed as string[];
}

/** Where the image puts the repository (the final stage's WORKDIR). */
export function imageAppDir(df: Dockerfile): string {
  const last = df.stages.length - 1;
  const w = df.instructions.filter((i) => i.keyword === "WORKDIR" && i.stage === last).pop();
  if (!w) throw new Error("the final stage has no WORKDIR");
  return w.args;
}

/**
 * The command a container of the image runs for `args`, as a plain process on this machine: the
 * ENTRYPOINT without its init (tini), `node` as this Node.js, and the image's app folder as the
 * repository root.
 */
export function entryCommand(args: readonly string[], df: Dockerfile = parseDockerfile()): { command: string; args: string[] } {
  const entry = execForm(df, "ENTRYPOINT");
  const nodeAt = entry.findIndex((x) => x === "node" || x.endsWith("/node"));
  if (nodeAt < 0) throw new Error(`ENTRYPOINT does not run node: ${JSON.stringify(entry)}`);
  const app = imageAppDir(df);
  const rest = entry.slice(nodeAt + 1).map((x) => (x.startsWith(`${app}/`) ? join(root, x.slice(app.length + 1)) : x));
  return { command: process.execPath, args: [...rest, ...args] };
}

/** Files of the repository under `relative`, recursively (no node_modules). */
export function existsInRepo(relative: string): boolean {
  return existsSync(join(root, relative));
}
