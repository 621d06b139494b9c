// memtrove for opencode: copy this file into .opencode/plugins/ (one project) or
// ~/.config/opencode/plugins/ (every project).
//
// chat.message                       -> `memtrove surface --context --stdin` on the prompt
// experimental.chat.system.transform -> adds what was surfaced (and, on a session's first
//                                       turn, `memtrove surface --bootstrap`) to the system prompt
// event session.idle                 -> the session's messages as a JSONL transcript, then
//                                       `memtrove hook decision-extractor|handoff-generator|feedback-loop`
// experimental.session.compacting    -> `memtrove hook precompact-extract` on that transcript
//
// The file exports one thing, the plugin: opencode calls every export of a plugin file.
// MEMTROVE_BIN names the memtrove command (default: `memtrove` on PATH); MEMTROVE_VAULT and
// MEMTROVE_CONFIG_DIR pass through to it. Every call fails open: no memtrove, a timeout or an
// error only means no context.

import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SURFACE_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 30_000;

function memtrove(args, input, timeout = SURFACE_TIMEOUT_MS) {
  const bin = process.env.MEMTROVE_BIN || "memtrove";
  return new Promise((resolve) => {
    const child = execFile(bin, args, { timeout, maxBuffer: 1024 * 1024 }, (error, stdout) =>
      resolve(error ? "" : String(stdout || "")),
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(JSON.stringify(input));
  });
}

// The text of a user message: its text parts, synthetic ones (other plugins' additions) left out.
function promptText(parts) {
  return (Array.isArray(parts) ? parts : [])
    .filter((part) => part?.type === "text" && !part.synthetic && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

// client.session.messages() items ({info: {role}, parts}) as flat {role, content} JSONL lines,
// the shape memtrove's Stop and PreCompact hooks read.
function transcriptLines(messages) {
  const lines = [];
  for (const message of Array.isArray(messages) ? messages : []) {
    const role = message?.info?.role;
    const content = promptText(message?.parts);
    if ((role === "user" || role === "assistant") && content) {
      lines.push(JSON.stringify({ role, content }));
    }
  }
  return lines;
}

function writeTranscript(sessionID, messages, folder = join(tmpdir(), "memtrove-opencode")) {
  const lines = transcriptLines(messages);
  if (lines.length < 2) return "";
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, `${String(sessionID).replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 120)}.jsonl`);
  writeFileSync(path, lines.join("\n") + "\n", { mode: 0o600 });
  return path;
}

export const MemtrovePlugin = async ({ client, directory }) => {
  const surfaced = new Map(); // sessionID -> context for the next model call
  const started = new Set(); // sessions whose bootstrap already ran

  const transcript = async (sessionID) => {
    try {
      const answer = await client.session.messages({ path: { id: sessionID } });
      return writeTranscript(sessionID, answer?.data ?? answer);
    } catch {
      return "";
    }
  };

  return {
    "chat.message": async (input, output) => {
      const sessionID = input?.sessionID || "";
      const parts = [];
      if (sessionID && !started.has(sessionID)) {
        started.add(sessionID);
        parts.push(await memtrove(["surface", "--bootstrap", "--stdin"], { session_id: sessionID }));
      }
      const prompt = promptText(output?.parts);
      const payload = { session_id: sessionID, prompt, cwd: directory || "" };
      parts.push(await memtrove(["surface", "--context", "--stdin"], payload));
      const text = parts.map((part) => part.trim()).filter(Boolean).join("\n\n");
      if (text) surfaced.set(sessionID, text);
      else surfaced.delete(sessionID);
    },

    "experimental.chat.system.transform": async (input, output) => {
      const text = surfaced.get(input?.sessionID || "");
      if (text && Array.isArray(output?.system)) output.system.push(text);
    },

    "experimental.session.compacting": async (input) => {
      const sessionID = input?.sessionID || "";
      const path = sessionID ? await transcript(sessionID) : "";
      if (path) {
        const payload = { session_id: sessionID, transcript_path: path, hook_event_name: "PreCompact", trigger: "auto" };
        await memtrove(["hook", "precompact-extract"], payload);
      }
    },

    event: async ({ event }) => {
      if (event?.type !== "session.idle") return;
      const sessionID = event.properties?.sessionID || "";
      const path = sessionID ? await transcript(sessionID) : "";
      if (!path) return;
      const payload = { session_id: sessionID, transcript_path: path, hook_event_name: "Stop" };
      await Promise.allSettled(
        ["decision-extractor", "handoff-generator", "feedback-loop"].map((name) =>
          memtrove(["hook", name], payload, STOP_TIMEOUT_MS),
        ),
      );
    },
  };
};
