// git-swarm:generated — written by `git swarm agents install opencode`; `git swarm agents uninstall opencode` removes it.
// Calls `git-swarm hook agent opencode <event>` with the payload on stdin and
// uses its answer; any failure (no binary, a timeout, bad output) is ignored,
// so the session never waits on git-swarm or breaks because of it.
import type { Plugin } from "@opencode-ai/plugin"

export const GitSwarm: Plugin = async (ctx) => {
  const directory: string | undefined = (ctx as any)?.directory
  // The briefing of each session, from `session-start`.
  const context = new Map<string, string>()

  const call = async (event: string, payload: unknown): Promise<any> => {
    try {
      const proc = Bun.spawn(["git-swarm", "hook", "agent", "opencode", event], {
        cwd: directory,
        stdin: new Blob([JSON.stringify(payload)]),
        stdout: "pipe",
        stderr: "ignore",
        timeout: 10_000,
      })
      const out = (await new Response(proc.stdout).text()).trim()
      await proc.exited
      return out ? JSON.parse(out) : undefined
    } catch {
      return undefined
    }
  }

  const started = async (event: string, sessionID: unknown) => {
    if (typeof sessionID !== "string" || !sessionID) return
    const answer = await call("session-start", { event, sessionID })
    if (typeof answer?.context === "string") context.set(sessionID, answer.context)
  }

  // opencode may call a hook with an input or output missing (a command
  // subtask that failed has no output): every field is read as optional,
  // and no hook lets an error reach opencode.
  const guarded =
    (hook: (input: any, output?: any) => Promise<void>) =>
    async (input: any, output?: any): Promise<void> => {
      try {
        await hook(input, output)
      } catch {}
    }

  return {
    event: guarded(async (input) => {
      const event = input?.event
      const props = event?.properties
      if (event?.type === "session.created") await started(event.type, props?.info?.id ?? props?.sessionID)
      if (event?.type === "session.compacted") await started(event.type, props?.sessionID)
    }),
    "experimental.chat.system.transform": guarded(async (input, output) => {
      const text = input?.sessionID ? context.get(input.sessionID) : undefined
      if (text && Array.isArray(output?.system)) output.system.push(text)
    }),
    "experimental.session.compacting": guarded(async (input, output) => {
      const text = input?.sessionID ? context.get(input.sessionID) : undefined
      if (text && Array.isArray(output?.context)) output.context.push(text)
    }),
    "tool.execute.before": guarded(async (input, output) => {
      if (input?.tool !== "task") return
      const args = output?.args
      const answer = await call("subagent-start", { tool: "task", sessionID: input.sessionID, callID: input.callID, args })
      if (typeof answer?.prepend === "string" && typeof args?.prompt === "string") {
        args.prompt = answer.prepend + "\n\n" + args.prompt
      }
    }),
    "tool.execute.after": guarded(async (input, output) => {
      const tool = input?.tool
      if (typeof tool !== "string") return
      const payload = {
        tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: input.args,
        output: output ? { title: output.title, output: output.output, metadata: output.metadata } : undefined,
      }
      await call(tool === "task" ? "subagent-stop" : "post-tool-use", payload)
    }),
  }
}
