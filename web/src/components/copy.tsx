import { useState } from 'preact/hooks';

/** A button that copies `text`, and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setCopied(false);
    }
  };
  return (
    <button type="button" class="button-secondary button-small" onClick={copy} aria-live="polite">
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A block of code with a copy button. */
export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <figure class="code-block">
      <figcaption>
        <span>{label}</span>
        <CopyButton text={code} label={`Copy ${label}`} />
      </figcaption>
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
    </figure>
  );
}

/** A secret shown once (a new key or an invite link), with a warning and a copy button. */
export function ShownOnce({ title, value }: { title: string; value: string }) {
  return (
    <div class="notice notice-success shown-once" role="status">
      <p>
        <strong>{title}</strong> It is shown only now: copy it and keep it somewhere safe.
      </p>
      <div class="secret-row">
        <code class="secret" data-testid="secret">
          {value}
        </code>
        <CopyButton text={value} />
      </div>
    </div>
  );
}
