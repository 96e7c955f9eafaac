/** Entry of the page `profinsight serve` serves: the viewer on the whole page, fetch transport. */
import { fetchTransport } from './app/api';
import { Viewer } from './app/viewer';

declare global {
  interface Window {
    /** the page's viewer (page scripts and UI tests reach it here) */
    profinsightViewer?: Viewer;
  }
}

const root = document.getElementById('profinsight-root');
if (root) {
  const viewer = new Viewer(root, fetchTransport(root.dataset.baseUrl || '/'), { useHash: true });
  window.profinsightViewer = viewer;
  void viewer.start();
}
