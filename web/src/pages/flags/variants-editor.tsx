/** Variants with their rollout split (which must add up to 100 %), and the payload of each. */
import type { VariantDraft } from './flag-form';

interface Props {
  variants: VariantDraft[];
  onChange: (variants: VariantDraft[]) => void;
}

export function VariantsEditor({ variants, onChange }: Props) {
  const total = variants.reduce((sum, v) => sum + (Number(v.rollout) || 0), 0);
  const set = (i: number, patch: Partial<VariantDraft>) => onChange(variants.map((v, j) => (j === i ? { ...v, ...patch } : v)));
  return (
    <fieldset class="card">
      <legend>Variants</legend>
      {variants.map((variant, i) => (
        <div class="filter-row" key={i} role="group" aria-label={`Variant ${i + 1}`}>
          <label class="field">
            <span>Variant key</span>
            <input required value={variant.key} onInput={(e) => set(i, { key: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field">
            <span>Description</span>
            <input value={variant.name} onInput={(e) => set(i, { name: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field field-narrow">
            <span>Rollout (%)</span>
            <input type="number" min={0} max={100} step="any" required value={variant.rollout} onInput={(e) => set(i, { rollout: (e.target as HTMLInputElement).value })} />
          </label>
          <button
            type="button"
            class="button-secondary button-small"
            aria-label={`Remove variant ${i + 1}`}
            disabled={variants.length <= 1}
            onClick={() => onChange(variants.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <p class={total === 100 ? 'muted' : 'warning-text'} aria-live="polite">
        The rollouts add up to {total}%{total === 100 ? '.' : ': they must add up to 100%.'}
      </p>
      <button type="button" class="button-secondary button-small" onClick={() => onChange([...variants, { key: `variant-${variants.length + 1}`, name: '', rollout: '0' }])}>
        Add variant
      </button>
    </fieldset>
  );
}
