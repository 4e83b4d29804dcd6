import { useEffect, useState } from 'preact/hooks';
import { api, pathOf, query } from '../../api/client';
import type { Page } from '../../api/types';
import { useResource } from '../../api/use-resource';

/** A searchable list of one API collection, with "load more" over its `next` links. */
export function useSearchList<T>(path: string, extra: Record<string, unknown> = {}) {
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  const [more, setMore] = useState<{ results: T[]; next: string | null } | null>(null);
  const [moreError, setMoreError] = useState<Error | null>(null);
  const key = JSON.stringify(extra);
  const first = useResource((signal) => api<Page<T>>(`${path}${query({ ...extra, search: applied, limit: 100 })}`, { signal }), [path, applied, key]);

  useEffect(() => {
    const timer = setTimeout(() => setApplied(search.trim()), 250);
    return () => clearTimeout(timer);
  }, [search]);
  useEffect(() => setMore(null), [path, applied, key]);

  const next = more ? more.next : first.data?.next ?? null;
  const loadMore = async () => {
    if (!next) return;
    try {
      const page = await api<Page<T>>(pathOf(next));
      setMore({ results: [...(more?.results ?? []), ...page.results], next: page.next });
    } catch (error) {
      setMoreError(error as Error);
    }
  };
  const reload = () => {
    setMore(null);
    first.reload();
  };
  return { search, setSearch, applied, first, items: [...(first.data?.results ?? []), ...(more?.results ?? [])], next, loadMore, moreError, reload };
}
