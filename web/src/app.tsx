/**
 * Routes: the sign-in pages, and everything of a project under /project/<id>/. Each page's
 * code is loaded when it is first opened.
 */
import { ErrorBoundary, lazy, LocationProvider, Route, Router, useLocation, useRoute } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { AuthProvider, useAuth } from './auth/session';
import { ProjectContext } from './auth/project';
import { Shell } from './components/shell';
import { EmptyState, ErrorNotice, Loading } from './components/status';
import type { ComponentChildren } from 'preact';

const LoginPage = lazy(() => import('./pages/login').then((m) => m.LoginPage));
const SignupPage = lazy(() => import('./pages/signup').then((m) => m.SignupPage));
const ActivityPage = lazy(() => import('./pages/activity/activity-page').then((m) => m.ActivityPage));
const FlagListPage = lazy(() => import('./pages/flags/flag-list-page').then((m) => m.FlagListPage));
const FlagEditorPage = lazy(() => import('./pages/flags/flag-editor-page').then((m) => m.FlagEditorPage));
const DataManagementPage = lazy(() => import('./pages/data-management/data-management-page').then((m) => m.DataManagementPage));
const InsightListPage = lazy(() => import('./pages/insights/insight-list-page').then((m) => m.InsightListPage));
const InsightPage = lazy(() => import('./pages/insights/insight-page').then((m) => m.InsightPage));
const SqlPage = lazy(() => import('./pages/sql/sql-page').then((m) => m.SqlPage));
const DashboardListPage = lazy(() => import('./pages/dashboards/dashboard-list-page').then((m) => m.DashboardListPage));
const DashboardPage = lazy(() => import('./pages/dashboards/dashboard-page').then((m) => m.DashboardPage));
const PersonsPage = lazy(() => import('./pages/persons/persons-page').then((m) => m.PersonsPage));
const PersonPage = lazy(() => import('./pages/persons/person-page').then((m) => m.PersonPage));
const GroupsPage = lazy(() => import('./pages/groups/groups-page').then((m) => m.GroupsPage));
const GroupPage = lazy(() => import('./pages/groups/group-page').then((m) => m.GroupPage));
const CohortListPage = lazy(() => import('./pages/cohorts/cohort-list-page').then((m) => m.CohortListPage));
const CohortEditorPage = lazy(() => import('./pages/cohorts/cohort-editor-page').then((m) => m.CohortEditorPage));
const ActionListPage = lazy(() => import('./pages/actions/action-list-page').then((m) => m.ActionListPage));
const ActionEditorPage = lazy(() => import('./pages/actions/action-editor-page').then((m) => m.ActionEditorPage));
const SettingsPage = lazy(() => import('./pages/settings/settings-page').then((m) => m.SettingsPage));

export function App() {
  return (
    <AuthProvider>
      <LocationProvider>
        <ErrorBoundary>
          <Router>
            <Route path="/login" component={LoginPage} />
            <Route path="/signup" component={SignupPage} />
            <Route path="/" component={Home} />
            <Route path="/project/:projectId/*" component={ProjectArea} />
            <Route default component={NotFound} />
          </Router>
        </ErrorBoundary>
      </LocationProvider>
    </AuthProvider>
  );
}

/** Where `/` leads: the first project's activity, or the sign-in page. */
function Home() {
  return (
    <SignedIn>
      <FirstProject />
    </SignedIn>
  );
}

function FirstProject() {
  const { state } = useAuth();
  const { route } = useLocation();
  const first = state.status === 'signed-in' ? state.projects[0] : undefined;
  useEffect(() => {
    if (first) route(`/project/${first.id}/activity`, true);
  }, [first, route]);
  if (first) return <Loading />;
  return (
    <main class="centered-page">
      <EmptyState title="No project yet">
        <p>You are not a member of any organization with a project. Ask an admin to invite you, or create one with <code>sightline init</code>.</p>
      </EmptyState>
    </main>
  );
}

/** Renders its children only with a session; otherwise sends the visitor to sign in and back. */
function SignedIn({ children }: { children: ComponentChildren }) {
  const { state, refresh } = useAuth();
  const { route, url } = useLocation();
  useEffect(() => {
    if (state.status === 'signed-out') route(`/login?next=${encodeURIComponent(url)}`, true);
  }, [state.status, route, url]);
  if (state.status === 'failed') {
    return (
      <main class="centered-page">
        <ErrorNotice error={state.error} retry={() => void refresh()} />
      </main>
    );
  }
  if (state.status !== 'signed-in') return <Loading />;
  return <>{children}</>;
}

function ProjectArea() {
  return (
    <SignedIn>
      <ProjectPages />
    </SignedIn>
  );
}

function ProjectPages() {
  const { state } = useAuth();
  const { params } = useRoute();
  const project = state.status === 'signed-in' ? state.projects.find((p) => String(p.id) === params.projectId) : undefined;
  if (!project) return <NotFound what="This project does not exist, or you are not a member of its organization." />;
  return (
    <ProjectContext.Provider value={project}>
      <Shell>
        <ErrorBoundary>
          <Router>
            <Route path="/activity" component={ActivityPage} />
            <Route path="/dashboards" component={DashboardListPage} />
            <Route path="/dashboards/:dashboardId" component={DashboardPage} />
            <Route path="/insights" component={InsightListPage} />
            <Route path="/insights/:insightId" component={InsightPage} />
            <Route path="/sql" component={SqlPage} />
            <Route path="/persons" component={PersonsPage} />
            <Route path="/persons/:personId" component={PersonPage} />
            <Route path="/groups" component={GroupsPage} />
            <Route path="/groups/:typeIndex" component={GroupsPage} />
            <Route path="/groups/:typeIndex/:groupKey" component={GroupPage} />
            <Route path="/cohorts" component={CohortListPage} />
            <Route path="/cohorts/:cohortId" component={CohortEditorPage} />
            <Route path="/actions" component={ActionListPage} />
            <Route path="/actions/:actionId" component={ActionEditorPage} />
            <Route path="/feature_flags" component={FlagListPage} />
            <Route path="/feature_flags/:flagId" component={FlagEditorPage} />
            <Route path="/data-management/:tab" component={DataManagementPage} />
            <Route path="/settings/:section" component={SettingsPage} />
            <Route default component={NotFoundInProject} />
          </Router>
        </ErrorBoundary>
      </Shell>
    </ProjectContext.Provider>
  );
}

function NotFoundInProject() {
  return (
    <EmptyState title="Page not found">
      <p>There is no such page in this project. Pick one from the navigation.</p>
    </EmptyState>
  );
}

function NotFound({ what = 'There is no page at this address.' }: { what?: string }) {
  return (
    <main class="centered-page">
      <EmptyState title="Not found">
        <p>{what}</p>
        <p>
          <a href="/">Go to the start page</a>
        </p>
      </EmptyState>
    </main>
  );
}
