/** The name and description an object's editor starts with (actions, cohorts). */
interface Props {
  name: string;
  description: string;
  onChange: (patch: { name?: string; description?: string }) => void;
}

export function NameFields({ name, description, onChange }: Props) {
  return (
    <>
      <label class="field">
        <span>Name</span>
        <input name="name" required maxLength={400} value={name} onInput={(e) => onChange({ name: (e.target as HTMLInputElement).value })} />
      </label>
      <label class="field">
        <span>Description</span>
        <textarea name="description" rows={2} value={description} onInput={(e) => onChange({ description: (e.target as HTMLTextAreaElement).value })} />
      </label>
    </>
  );
}
