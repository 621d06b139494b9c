// memtrove's OpenClaw memory plugin (installed by `memtrove setup openclaw`).
//
// session_start        -> `memtrove surface --bootstrap --stdin`, kept for the first turn
// before_prompt_build  -> `memtrove surface --context --stdin`, returned as prependContext
// agent_end            -> the run's messages written as a JSONL transcript, then
//                         `memtrove hook decision-extractor|handoff-generator|feedback-loop`
// before_compaction    -> `memtrove hook precompact-extract` on that transcript
// tools                -> memtrove_search, memtrove_get, memtrove_session_log,
//                         memtrove_timeline, memtrove_similar over `memtrove serve`'s REST API
//
// Every call fails open: a missing memtrove, a timeout or an error means no context, never
// a broken turn. MEMTROVE_API_TOKEN, when set, is sent as the bearer token.

import { execFile, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

const SURFACE_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 30_000;
const REST_TIMEOUT_MS = 5_000;
const bootstrapBySession = new Map();

function memtroveRun(bin, args, input, timeout, env) {
  return new Promise((resolve) => {
    const child = execFile(
      bin,
      args,
      { timeout, maxBuffer: 1024 * 1024, env: { ...process.env, ...(env || {}) } },
      (error, stdout) => resolve(error ? "" : String(stdout || "")),
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(JSON.stringify(input));
  });
}

function messageText(message) {
  const content = message?.content ?? message?.message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "string" ? part : part?.type === "text" ? part.text : ""))
    .filter((text) => typeof text === "string" && text)
    .join("\n");
}

// One JSONL line per message in the flat {role, content} shape memtrove's hooks read.
function transcriptLines(messages) {
  const lines = [];
  for (const message of Array.isArray(messages) ? messages : []) {
    const role = message?.role ?? message?.message?.role;
    const content = messageText(message);
    if (["user", "assistant"].includes(role) && content) {
      lines.push(JSON.stringify({ role, content }));
    }
  }
  return lines;
}

function safeName(text) {
  return String(text || "session").replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 120);
}

function writeTranscript(folder, sessionId, messages) {
  const lines = transcriptLines(messages);
  if (lines.length < 2) return "";
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, `${safeName(sessionId)}.jsonl`);
  writeFileSync(path, lines.join("\n") + "\n", { mode: 0o600 });
  return path;
}

async function restCall(cfg, method, path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = process.env.MEMTROVE_API_TOKEN;
  if (token) headers.Authorization = `Bearer ${token}`;
  try {
    const response = await fetch(`http://127.0.0.1:${cfg.servePort}${path}`, {
      method,
      headers,
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(REST_TIMEOUT_MS),
    });
    return { ok: response.ok, data: await response.json() };
  } catch (error) {
    return { ok: false, data: { error: `memtrove serve unreachable: ${error?.name || "error"}` } };
  }
}

const text = (value, details) => ({ content: [{ type: "text", text: value }], details });
const id = (value) => encodeURIComponent(String(value ?? ""));

function createTools(cfg) {
  const docid = { docid: { type: "string", description: "Document id from search results" } };
  return [
    {
      name: "memtrove_search",
      label: "memtrove search",
      description: "Search long-term memory: past decisions, preferences, sessions, notes.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string" },
          mode: { type: "string", enum: ["auto", "keyword", "semantic", "hybrid"] },
          collection: { type: "string" },
          limit: { type: "number" },
        },
        required: ["query"],
      },
      async execute(_callId, params) {
        const body = { query: String(params.query ?? ""), mode: params.mode ?? "auto" };
        if (params.collection) body.collection = String(params.collection);
        if (params.limit) body.limit = Number(params.limit);
        const { ok, data } = await restCall(cfg, "POST", "/search", body);
        if (!ok) return text(`Search failed: ${data?.error || "unknown error"}`);
        if (!data.results?.length) return text("No relevant memories found.", { count: 0 });
        const lines = data.results.map(
          (r, i) => `${i + 1}. [${r.contentType}] ${r.title || r.path} #${r.docid} (score: ${r.score})\n   ${r.snippet}`,
        );
        return text(`Found ${data.count} results:\n\n${lines.join("\n")}`, { count: data.count });
      },
    },
    {
      name: "memtrove_get",
      label: "memtrove get",
      description: "Read one memory document in full by its docid.",
      parameters: { type: "object", properties: docid, required: ["docid"] },
      async execute(_callId, params) {
        const { ok, data } = await restCall(cfg, "GET", `/documents/${id(params.docid)}`);
        if (!ok) return text(`Document not found: ${params.docid}`);
        return text(`# ${data.title || data.path}\n\nCollection: ${data.collection}\nModified: ${data.modifiedAt}\n\n${data.body}`);
      },
    },
    {
      name: "memtrove_session_log",
      label: "memtrove sessions",
      description: "Recent agent sessions: when they ran and how many prompts they had.",
      parameters: { type: "object", properties: { limit: { type: "number" } } },
      async execute(_callId, params) {
        const limit = Number(params.limit) || 5;
        const { ok, data } = await restCall(cfg, "GET", `/sessions?limit=${limit}`);
        if (!ok) return text(`Failed to read sessions: ${data?.error}`);
        if (!data.sessions?.length) return text("No session history found.");
        const lines = data.sessions.map(
          (s, i) => `${i + 1}. [${s.started_at}] ${String(s.session_id).slice(0, 8)} - ${s.prompt_count} prompts`,
        );
        return text(`Recent sessions:\n\n${lines.join("\n")}`, { count: data.sessions.length });
      },
    },
    {
      name: "memtrove_timeline",
      label: "memtrove timeline",
      description: "What was written just before and after a document.",
      parameters: {
        type: "object",
        properties: { ...docid, before: { type: "number" }, after: { type: "number" } },
        required: ["docid"],
      },
      async execute(_callId, params) {
        const query = `before=${Number(params.before ?? 5)}&after=${Number(params.after ?? 5)}`;
        const { ok, data } = await restCall(cfg, "GET", `/timeline/${id(params.docid)}?${query}`);
        if (!ok) return text(`Timeline failed: ${data?.error}`);
        const row = (e) => `  - [${e.modifiedAt}] ${e.title} (${e.collection})`;
        const lines = [...(data.before || []).map(row), `-> ${data.anchor?.title} [${data.anchor?.modifiedAt}]`, ...(data.after || []).map(row)];
        return text(lines.join("\n"));
      },
    },
    {
      name: "memtrove_similar",
      label: "memtrove similar",
      description: "Documents whose meaning is closest to a document.",
      parameters: {
        type: "object",
        properties: { ...docid, limit: { type: "number" } },
        required: ["docid"],
      },
      async execute(_callId, params) {
        const limit = Number(params.limit) || 5;
        const { ok, data } = await restCall(cfg, "GET", `/graph/similar/${id(params.docid)}?limit=${limit}`);
        if (!ok) return text(`Similar search failed: ${data?.error}`);
        if (!data.similar?.length) return text("No similar documents found.");
        const lines = data.similar.map((s, i) => `${i + 1}. ${s.title || s.path} (similarity: ${s.score})`);
        return text(`Similar documents:\n\n${lines.join("\n")}`, { count: data.similar.length });
      },
    },
  ];
}

function resolveConfig(pluginConfig) {
  const given = pluginConfig || {};
  return {
    bin: given.memtroveBin || process.env.MEMTROVE_BIN || "memtrove",
    servePort: Number(given.servePort) || 7438,
    enableTools: given.enableTools !== false,
    manageServe: given.manageServe === true,
    env: given.env && typeof given.env === "object" ? given.env : {},
    transcripts: join(process.env.OPENCLAW_STATE_DIR || join(homedir() || tmpdir(), ".openclaw"), "memtrove-transcripts"),
  };
}

const plugin = {
  id: "memtrove",
  name: "memtrove",
  description: "Local-first memory for OpenClaw agents",
  kind: "memory",

  register(api) {
    const cfg = resolveConfig(api.pluginConfig);
    const run = (args, input, timeout) => memtroveRun(cfg.bin, args, input, timeout, cfg.env);
    const stopHooks = async (sessionId, messages) => {
      const path = writeTranscript(cfg.transcripts, sessionId, messages);
      if (!path) return;
      const input = { session_id: sessionId, transcript_path: path, hook_event_name: "Stop" };
      await Promise.allSettled(
        ["decision-extractor", "handoff-generator", "feedback-loop"].map((name) =>
          run(["hook", name], input, STOP_TIMEOUT_MS),
        ),
      );
    };

    api.registerMemoryCapability?.({
      runtime: {
        async getMemorySearchManager() {
          return { manager: null };
        },
        resolveMemoryBackendConfig() {
          return { backend: "builtin" };
        },
      },
    });

    api.on("session_start", async (event, ctx) => {
      const sessionId = event?.sessionId || ctx?.sessionId;
      if (!sessionId) return;
      const found = await run(["surface", "--bootstrap", "--stdin"], { session_id: sessionId }, SURFACE_TIMEOUT_MS);
      if (found.trim()) bootstrapBySession.set(sessionId, found.trim());
    });

    api.on(
      "before_prompt_build",
      async (event, ctx) => {
        const sessionId = ctx?.sessionId || "";
        const parts = [];
        if (bootstrapBySession.has(sessionId)) {
          parts.push(bootstrapBySession.get(sessionId));
          bootstrapBySession.delete(sessionId);
        }
        const prompt = typeof event?.prompt === "string" ? event.prompt : "";
        const input = { session_id: sessionId, prompt, cwd: ctx?.workspaceDir || "" };
        const found = await run(["surface", "--context", "--stdin"], input, SURFACE_TIMEOUT_MS);
        if (found.trim()) parts.push(found.trim());
        return parts.length ? { prependContext: parts.join("\n\n") } : undefined;
      },
      { priority: 10 },
    );

    api.on("agent_end", async (event, ctx) => {
      if (ctx?.sessionId) await stopHooks(ctx.sessionId, event?.messages);
    });

    api.on("before_compaction", async (event, ctx) => {
      const sessionId = ctx?.sessionId || ctx?.sessionKey || "";
      const path = writeTranscript(cfg.transcripts, sessionId, event?.messages);
      if (path) {
        await run(["hook", "precompact-extract"], { session_id: sessionId, transcript_path: path, hook_event_name: "PreCompact" }, SURFACE_TIMEOUT_MS);
      }
    });

    api.on("session_end", async (event) => {
      bootstrapBySession.delete(event?.sessionId);
    });

    if (cfg.enableTools) {
      for (const tool of createTools(cfg)) api.registerTool(tool, { name: tool.name });
    }

    if (cfg.manageServe) {
      let child = null;
      api.registerService?.({
        id: "memtrove-serve",
        start() {
          child = spawn(cfg.bin, ["serve", "--port", String(cfg.servePort)], {
            env: { ...process.env, ...cfg.env },
            stdio: "ignore",
          });
          child.unref();
        },
        stop() {
          if (child && !child.killed) child.kill("SIGTERM");
          child = null;
        },
      });
    }
  },
};

export default plugin;
