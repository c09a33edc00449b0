// git-swarm:generated — written by `git swarm agents install opencode`; `git swarm agents uninstall opencode` removes it.
// Calls `git-swarm hook agent opencode <event>` with the payload on stdin and
// uses its answer; any failure (no binary, a timeout, bad output) is ignored,
// so the session never waits on git-swarm or breaks because of it.
import type { Plugin } from "@opencode-ai/plugin"

export const GitSwarm: Plugin = async ({ directory }) => {
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

  const started = async (event: string, sessionID: string | undefined) => {
    if (!sessionID) return
    const answer = await call("session-start", { event, sessionID })
    if (typeof answer?.context === "string") context.set(sessionID, answer.context)
  }

  return {
    event: async ({ event }) => {
      const props: any = (event as any).properties
      if (event.type === "session.created") await started(event.type, props?.info?.id ?? props?.sessionID)
      if (event.type === "session.compacted") await started(event.type, props?.sessionID)
    },
    "experimental.chat.system.transform": async (input, output) => {
      const text = input.sessionID ? context.get(input.sessionID) : undefined
      if (text) output.system.push(text)
    },
    "experimental.session.compacting": async (input, output) => {
      const text = context.get(input.sessionID)
      if (text) output.context.push(text)
    },
    "tool.execute.before": async (input, output) => {
      if (input.tool !== "task") return
      const { sessionID, callID } = input
      const answer = await call("subagent-start", { tool: "task", sessionID, callID, args: output.args })
      if (typeof answer?.prepend === "string" && typeof output.args?.prompt === "string") {
        output.args.prompt = answer.prepend + "\n\n" + output.args.prompt
      }
    },
    "tool.execute.after": async (input: any, output) => {
      const { tool, sessionID, callID, args } = input
      const payload = {
        tool,
        sessionID,
        callID,
        args,
        output: { title: output.title, output: output.output, metadata: output.metadata },
      }
      await call(tool === "task" ? "subagent-stop" : "post-tool-use", payload)
    },
  }
}
