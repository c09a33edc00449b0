// git-swarm:generated — written by `git swarm agents install opencode`; `git swarm agents uninstall opencode` removes it.
// Calls `git-swarm hook agent opencode <event>` with the payload on stdin and
// uses its answer; any failure (no binary, a timeout, bad output) is ignored,
// so the session never waits on git-swarm or breaks because of it.
import type { Plugin } from "@opencode-ai/plugin"

export const GitSwarm: Plugin = async (ctx) => {
  const directory: string | undefined = (ctx as any)?.directory
  const client: any = (ctx as any)?.client
  // Background tasks (opencode's `background: true`) by their child
  // session: their call returned at the launch; the stop is read when the
  // child session goes idle.
  const jobs = new Map<string, any>()
  // The briefing of each session, from `session-start`.
  const context = new Map<string, string>()
  // Each session's agent (`build`, a subagent's `general`…), from opencode's
  // session and message events: it is the role git-swarm shows lessons for.
  const agents = new Map<string, string>()
  const noteAgent = (sessionID: unknown, agent: unknown) => {
    if (typeof sessionID === "string" && typeof agent === "string" && agent) agents.set(sessionID, agent)
  }

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
    const answer = await call("session-start", { event, sessionID, agent: agents.get(sessionID) })
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
      noteAgent(props?.info?.id ?? props?.sessionID, props?.info?.agent)
      // A subagent's session (it has a parent) gets its lessons with its
      // task, from `tool.execute.before`: no briefing of its own.
      if (event?.type === "session.created" && !props?.info?.parentID)
        await started(event.type, props?.info?.id ?? props?.sessionID)
      const idle = props?.sessionID
      if (event?.type === "session.idle" && typeof idle === "string" && jobs.has(idle)) {
        const job = jobs.get(idle)
        jobs.delete(idle)
        const res = await client?.session?.messages?.({ path: { id: idle } })
        const list: any[] = Array.isArray(res?.data) ? res.data : Array.isArray(res) ? res : []
        const last = [...list].reverse().find((m) => m?.info?.role === "assistant")
        const text = (Array.isArray(last?.parts) ? last.parts : [])
          .filter((p: any) => p?.type === "text" && typeof p?.text === "string")
          .map((p: any) => p.text)
          .join("\n")
        await call("subagent-stop", { ...job, output: { output: text } })
      }
      if (event?.type === "session.compacted") await started(event.type, props?.sessionID)
    }),
    "chat.message": guarded(async (input, output) => {
      noteAgent(input?.sessionID ?? output?.message?.sessionID, output?.message?.agent ?? input?.agent)
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
      // A background task's call returns at its launch, not its end: its
      // final answer is not here, so there are no acks to read yet.
      if (tool === "task" && output?.metadata?.background === true) {
        const child = output.metadata.jobId ?? output.metadata.sessionId
        if (typeof child === "string") {
          jobs.set(child, { tool, sessionID: input.sessionID, callID: input.callID, args: input.args, agent: agents.get(input.sessionID) })
        }
        return
      }
      const payload = {
        tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: input.args,
        agent: agents.get(input.sessionID),
        output: output ? { title: output.title, output: output.output, metadata: output.metadata } : undefined,
      }
      await call(tool === "task" ? "subagent-stop" : "post-tool-use", payload)
    }),
  }
}
