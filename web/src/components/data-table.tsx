/** A table with a caption (for screen readers, and shown when asked) and column headings; rows are the children. */
import type { ComponentChildren } from 'preact';

export interface Column {
  label: string;
  /** Left out below 760 px. */
  wideOnly?: boolean;
  /** Read out, not shown (a column of buttons). */
  hidden?: boolean;
}

interface Props {
  caption: string;
  showCaption?: boolean;
  columns: Column[];
  class?: string;
  children: ComponentChildren;
}

export function DataTable({ caption, showCaption = false, columns, class: extra, children }: Props) {
  return (
    <div class="table-scroll">
      <table class={extra ? `data-table ${extra}` : 'data-table'}>
        <caption class={showCaption ? undefined : 'visually-hidden'}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col" class={column.wideOnly ? 'wide-only' : undefined}>
                {column.hidden ? <span class="visually-hidden">{column.label}</span> : column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
