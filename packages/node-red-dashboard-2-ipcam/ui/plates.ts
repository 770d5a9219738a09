/* The ipcam-ui-plates bundle: Dashboard 2 loads it as the global `ipcam-ui-plates`. */
export { default as IpcamUiPlates } from './components/IpcamUiPlates.vue';
