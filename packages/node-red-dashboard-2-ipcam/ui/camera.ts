/* The ipcam-ui-camera bundle: Dashboard 2 loads it as the global `ipcam-ui-camera`. */
export { default as IpcamUiCamera } from './components/IpcamUiCamera.vue';
