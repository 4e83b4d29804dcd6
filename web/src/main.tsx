import { render } from 'preact';
import { App } from './app';
import { startEarly } from './early';
import './styles.css';

startEarly(location.pathname);
render(<App />, document.getElementById('app')!);
