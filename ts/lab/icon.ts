/** The profinsight icon: timeline bars, coloured by JupyterLab's icon classes so it follows the theme. */
import { LabIcon } from '@jupyterlab/ui-components';

const svgstr = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <rect x="2" y="3" width="20" height="2.5" rx="1"/>
    <rect x="2" y="8" width="9" height="2.5" rx="1"/>
    <rect x="12.5" y="8" width="5" height="2.5" rx="1"/>
    <rect x="4" y="13" width="5" height="2.5" rx="1"/>
    <rect x="10.5" y="13" width="11.5" height="2.5" rx="1"/>
    <rect x="2" y="18" width="3.5" height="2.5" rx="1"/>
    <rect x="7" y="18" width="3.5" height="2.5" rx="1"/>
    <rect x="14" y="18" width="6" height="2.5" rx="1"/>
  </g>
</svg>`;

export const profinsightIcon = new LabIcon({ name: 'profinsight:icon', svgstr });
