/** How to send events here: posthog-js and posthog-node set up with this project's key and this server's address. */
import { CodeBlock } from './copy';

export function InstallSnippets({ token }: { token: string }) {
  const host = location.origin;
  const browser = `npm install posthog-js

import posthog from 'posthog-js'

posthog.init('${token}', {
  api_host: '${host}',
})`;
  const node = `npm install posthog-node

import { PostHog } from 'posthog-node'

const posthog = new PostHog('${token}', {
  host: '${host}',
  // personalApiKey: '<personal API key>', // for local flag evaluation
})

posthog.capture({ distinctId: 'user-1', event: 'signed up' })
await posthog.shutdown()`;
  return (
    <div class="snippets">
      <CodeBlock label="posthog-js (browser)" code={browser} />
      <CodeBlock label="posthog-node (server)" code={node} />
    </div>
  );
}
