import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { LEVEL_NAMES, type Invite, type Level, type Member, type Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { useProject } from '../../auth/project';
import { useSignedIn } from '../../auth/session';
import { ShownOnce } from '../../components/copy';
import { fullDate, timeAgo } from '../../components/format';
import { ErrorNotice, Loading } from '../../components/status';
import { canChangeLevel, canGrant, canRemove } from './member-rules';
import { DataTable } from '../../components/data-table';

const LEVELS: Level[] = [1, 8, 15];

export function OrganizationSettings() {
  const project = useProject();
  const { me } = useSignedIn();
  const org = `/api/organizations/${project.organization}`;
  const actor = project.effective_membership_level;
  const members = useResource((signal) => api<Page<Member>>(`${org}/members/?limit=1000`, { signal }), [org]);
  const invites = useResource((signal) => api<Page<Invite>>(`${org}/invites/?limit=1000`, { signal }), [org]);
  const [error, setError] = useState<Error | null>(null);

  const act = async (request: () => Promise<unknown>) => {
    setError(null);
    try {
      await request();
    } catch (failure) {
      setError(failure as Error);
    }
    members.reload();
    invites.reload();
  };

  return (
    <div class="settings-sections">
      <section class="card" aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <p class="hint">
          You are {actor === 1 ? 'a member' : actor === 8 ? 'an admin' : 'an owner'} of this organization.{' '}
          {actor >= 8 ? 'Admins can invite people and change levels up to their own; only owners make owners.' : 'Only admins and owners can invite people or change levels.'}
        </p>
        <ErrorNotice error={error} />
        <ErrorNotice error={members.error} retry={members.reload} />
        {!members.data ? (
          <Loading label="Loading members…" />
        ) : (
          <DataTable caption="Members" columns={[{ label: 'Name' }, { label: 'Email' }, { label: 'Level' }, { label: 'Joined', wideOnly: true }, { label: 'Actions', hidden: true }]}>
                {members.data.results.map((member) => {
                  const isSelf = member.user.uuid === me.uuid;
                  const editable = canChangeLevel(actor, member.level, isSelf);
                  return (
                    <tr key={member.id}>
                      <td>
                        {[member.user.first_name, member.user.last_name].filter(Boolean).join(' ') || '—'}
                        {isSelf && <span class="muted"> (you)</span>}
                      </td>
                      <td>{member.user.email}</td>
                      <td>
                        {editable ? (
                          <label class="field field-inline">
                            <span class="visually-hidden">Level of {member.user.email}</span>
                            <select
                              value={String(member.level)}
                              onChange={(e) =>
                                void act(() => api(`${org}/members/${member.user.uuid}/`, { method: 'PATCH', body: { level: Number((e.target as HTMLSelectElement).value) } }))
                              }
                            >
                              {LEVELS.filter((l) => l === member.level || canGrant(actor, l)).map((l) => (
                                <option key={l} value={String(l)}>
                                  {LEVEL_NAMES[l]}
                                </option>
                              ))}
                            </select>
                          </label>
                        ) : (
                          LEVEL_NAMES[member.level]
                        )}
                      </td>
                      <td class="wide-only">
                        <time dateTime={member.joined_at} title={fullDate(member.joined_at)}>
                          {timeAgo(member.joined_at)}
                        </time>
                      </td>
                      <td>
                        {canRemove(actor, member.level, isSelf) && (
                          <button
                            type="button"
                            class="button-danger button-small"
                            onClick={() =>
                              confirm(isSelf ? 'Leave this organization?' : `Remove ${member.user.email} from the organization?`) &&
                              void act(() => api(`${org}/members/${member.user.uuid}/`, { method: 'DELETE' }))
                            }
                          >
                            {isSelf ? 'Leave' : 'Remove'}
                            <span class="visually-hidden"> {member.user.email}</span>
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
          </DataTable>
        )}
      </section>
      <Invites org={org} actor={actor} invites={invites} onChange={() => invites.reload()} act={act} />
    </div>
  );
}

interface InvitesProps {
  org: string;
  actor: Level;
  invites: ReturnType<typeof useResource<Page<Invite>>>;
  onChange: () => void;
  act: (request: () => Promise<unknown>) => Promise<void>;
}

function Invites({ org, actor, invites, onChange, act }: InvitesProps) {
  const [email, setEmail] = useState('');
  const [level, setLevel] = useState<Level>(1);
  const [created, setCreated] = useState<Invite | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const isAdmin = actor >= 8;

  const invite = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      setCreated(await api<Invite>(`${org}/invites/`, { method: 'POST', body: { target_email: email, level } }));
      setEmail('');
      onChange();
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <section class="card" aria-labelledby="invites-heading">
      <h2 id="invites-heading">Invites</h2>
      {isAdmin ? (
        <form class="filter-row" onSubmit={invite} aria-label="Invite someone">
          <label class="field">
            <span>Email to invite</span>
            <input type="email" required maxLength={254} value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          </label>
          <label class="field">
            <span>Level</span>
            <select value={String(level)} onChange={(e) => setLevel(Number((e.target as HTMLSelectElement).value) as Level)}>
              {LEVELS.filter((l) => canGrant(actor, l)).map((l) => (
                <option key={l} value={String(l)}>
                  {LEVEL_NAMES[l]}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="button-primary">
            Create invite link
          </button>
        </form>
      ) : (
        <p class="hint">Only admins and owners can invite people.</p>
      )}
      <p class="hint">No e-mail is sent: pass the link on yourself. It works once, for three days.</p>
      <ErrorNotice error={error} />
      {created?.invite_link && <ShownOnce title={`Invite link for ${created.target_email}.`} value={created.invite_link} />}
      <ErrorNotice error={invites.error} retry={invites.reload} />
      {invites.data && invites.data.results.length > 0 && (
        <DataTable caption="Pending invites" showCaption columns={[{ label: 'Email' }, { label: 'Level' }, { label: 'Created' }, { label: 'Actions', hidden: true }]}>
              {invites.data.results.map((pending) => (
                <tr key={pending.id}>
                  <td>{pending.target_email}</td>
                  <td>{LEVEL_NAMES[pending.level]}</td>
                  <td>
                    {timeAgo(pending.created_at)}
                    {pending.is_expired && <span class="warning-text"> (expired)</span>}
                  </td>
                  <td>
                    {isAdmin && (
                      <button type="button" class="button-secondary button-small" onClick={() => void act(() => api(`${org}/invites/${pending.id}/`, { method: 'DELETE' }))}>
                        Cancel<span class="visually-hidden"> the invite of {pending.target_email}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
        </DataTable>
      )}
    </section>
  );
}
